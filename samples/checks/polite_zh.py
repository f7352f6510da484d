"""Custom hook: a Chinese customer-service reply must be polite and must not blame the customer."""

POLITE = ("您好", "抱歉", "感谢", "请")
BLAME = ("你自己", "你的错", "怪你")


def check(output: str, ctx: dict) -> dict:
    polite = [w for w in POLITE if w in output]
    blame = [w for w in BLAME if w in output]
    passed = len(polite) >= 2 and not blame
    score = min(5, 1 + len(polite)) if not blame else 1
    message = f"polite markers {polite}; blaming phrases {blame}"
    return {"pass": passed, "message": message, "score": score}
