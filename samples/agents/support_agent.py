#!/usr/bin/env python3
"""A tiny deterministic agent for the bundled samples; it speaks omk's command protocol.

omk runs it once per sample (`target: cmd:python agents/support_agent.py`) and writes one JSON
request line to stdin. The agent picks tools with plain rules (an order number → lookup_order,
refund words → issue_refund, a file path → Read), asks omk for them with `tool_call` lines,
reads each `tool_result` line omk answers from the sample's mocks, and writes its answer from
those results as one `response` line. No model, no network, standard library only: the same
request always gets the same answer, so the demo runs offline.

For the Big Sky demo (samples/bigsky/) it also reads the conversation so far (`messages`: an order
number said earlier counts), the dataset's `context` (the store's name), and `single_step`: then
it answers after its first step, reporting the tool call it wants instead of asking omk to run it.
The bundled conversations (samples with `turns`) rely on the same `messages`: omk starts the agent
once per turn, and it answers a follow-up from what was said and replied in the earlier turns.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys

CJK = re.compile(r"[\u4e00-\u9fff]")
ORDER_ID = re.compile(r"\b[A-Z]\d{4}\b")
FILE_PATH = re.compile(r"\b[\w./-]+\.(?:py|js|ts|go|java|rb|md|json|yaml|yml|toml)\b")
REFUND_WORDS = ("refund", "money back", "退款", "退货")


class FirstStep(Exception):
    """Single-step mode: the agent stops at its first tool call and reports it."""

    def __init__(self, tool: str, tool_input: dict):
        self.call = {"tool": tool, "input": tool_input}


class Agent:
    def __init__(self, request: dict):
        self.request = request
        self.prompt: str = request.get("prompt") or ""
        self.tools = {t["name"] for t in request.get("tools") or []}
        self.context: dict = request.get("context") or {}
        self.earlier = " ".join(str(m.get("content") or "") for m in (request.get("messages") or [])[:-1] if m.get("role") == "user")
        self.replied = " ".join(str(m.get("content") or "") for m in (request.get("messages") or [])[:-1] if m.get("role") == "assistant")
        self.rounds = 0
        self.next_id = 0

    # --- the protocol ---------------------------------------------------------------------
    def call(self, tool: str, tool_input: dict) -> object:
        """Ask omk to run a tool; the answer is the mock's output (parsed when it is JSON)."""
        if self.request.get("single_step"):
            raise FirstStep(tool, tool_input)
        self.next_id += 1
        send({"type": "tool_call", "id": f"t{self.next_id}", "tool": tool, "input": tool_input})
        self.rounds += 1
        reply = json.loads(sys.stdin.readline() or "{}")
        output = reply.get("output", "")
        if reply.get("is_error"):
            return {"error": output}
        try:
            return json.loads(output)
        except (TypeError, ValueError):
            return output

    # --- deciding -------------------------------------------------------------------------
    def answer(self) -> str:
        p, low = self.prompt, self.prompt.lower()
        refund_issued = re.search(r"\bR-\d+\b", self.replied)  # this conversation already issued a refund
        if refund_issued and re.search(r"\b(when|how long)\b", low):
            return self.refund_timing(refund_issued.group(0))
        if re.search("进水|摔", p) and "保修" in self.earlier + self.replied:
            return self.damage_zh()
        order = ORDER_ID.search(p) or (ORDER_ID.search(self.earlier) if re.search(r"\b(it|its)\b|它", low + p) else None)
        if order and "lookup_order" in self.tools:
            return self.order(order.group(0), any(w in low for w in REFUND_WORDS))
        path = FILE_PATH.search(p)
        if path and "Read" in self.tools:
            return self.review_file(path.group(0))
        if "json only" in low and "findings" in low:
            return self.json_findings()
        if "approve" in low and re.search(r"api_key|sk-", low):
            return REFUSE_SECRET
        if "select" in low and re.search(r"['\"]\s*\+\s*\w", p):
            return SQL_INJECTION_ZH if CJK.search(p) else SQL_INJECTION_EN
        if "refactor" in low:
            return REFACTOR
        if "retry(" in p and "总结" in p:
            return self.retry_summary_zh()
        if "保修" in p:
            return self.warranty_zh()
        if "bluetoothctl" in p:
            return PAIRING_STEPS
        if re.search(r"\b(manager|supervisor)\b", low) or "lost" in low:
            return self.escalate()
        if "no user message" in low:
            return GREETING
        if "who am i talking to" in low or "你是谁" in p:
            store = (self.context.get("store") or {}).get("name") or "Acme"
            return GREETING.replace("Acme", store) if not CJK.search(p) else f"您好！我是 {store} 的客服 Nova，请问有什么可以帮您？"
        return "I'm sorry, I can't help with that yet. A teammate will follow up."

    def order(self, order_id: str, wants_refund: bool) -> str:
        info = self.call("lookup_order", {"order_id": order_id})
        zh = bool(CJK.search(self.prompt))
        if wants_refund and "issue_refund" in self.tools:
            refund = self.call("issue_refund", {"order_id": order_id, "reason": "customer request"})
            if isinstance(refund, dict) and refund.get("ok"):
                if zh:
                    return (
                        f"您好，很抱歉给您带来了不便。已为订单 {order_id} 办理退款，退款单号 {refund.get('refund_id')}，"
                        f"金额 {refund.get('amount')} 元，预计 3–5 个工作日原路退回。感谢您的耐心，请留意退款到账通知。"
                    )
                return f"Your refund for order {order_id} is on its way: {refund.get('refund_id')}, {refund.get('amount')}."
            return "很抱歉，退款暂时无法办理，我已转交主管处理，请稍候。" if zh else "Sorry, I could not issue the refund; a supervisor will follow up."
        if not isinstance(info, dict) or "error" in info:
            return f"Sorry, I could not find order {order_id}. Could you check the number?"
        if info.get("status") == "shipped":
            return (
                f"Sorry for the wait! Order {order_id} has shipped with {info.get('carrier')} (tracking "
                f"{info.get('tracking')}) and is now expected on {info.get('eta')}. You can follow it on "
                f"{info.get('carrier')}'s site with that number. If it hasn't arrived by then, reply here and "
                "I'll open a trace with the carrier."
            )
        return f"Order {order_id} is {info.get('status')}."

    def review_file(self, path: str) -> str:
        content = self.call("Read", {"file_path": path})
        text = content if isinstance(content, str) else json.dumps(content)
        findings = []
        if "md5" in text.lower():
            findings.append(
                "`login` hashes passwords with unsalted MD5 (`hashlib.md5`), which is fast to brute-force "
                "and has no per-user salt.\n\nFix: store passwords with bcrypt or argon2 (e.g. `argon2-cffi`), "
                "verify with the library's constant-time check, and migrate existing hashes on next login."
            )
        if re.search(r"['\"]\s*\+\s*\w", text) and "select" in text.lower():
            findings.append("A SQL query is built by string concatenation: use parameterised queries.")
        if not findings:
            return f"I read {path} and found no security problem in it."
        return f"I read {path} first. " + "\n\n".join(findings)

    def json_findings(self) -> str:
        diff = [line for line in self.prompt.splitlines() if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]
        findings = []
        for number, line in enumerate(diff, 1):
            added = line[1:].strip().replace(" ", "").lower()
            if not line.startswith("+"):
                continue
            if added == "timeout=0":
                findings.append((number, "high", "timeout = 0 disables the timeout; a slow server hangs the worker forever"))
            elif added in ("verify_ssl=false", "verify=false"):
                findings.append((number, "critical", "verify_ssl = False turns off certificate checks and allows man-in-the-middle attacks"))
        return json.dumps(
            {"findings": [{"id": f"F{i}", "severity": s, "line": n, "message": m} for i, (n, s, m) in enumerate(findings, 1)]}
        )

    def retry_summary_zh(self) -> str:
        numbers = "零一二三四五六七八九十"
        counts = [int(n) for n in re.findall(r"retry\((\d+)", self.prompt)]
        if len(counts) < 2 or max(counts) > 10:
            return "这次改动调整了重试策略。"
        old, new = counts[0], counts[1]
        extras = []
        if "exponential" in self.prompt:
            extras.append("指数退避")
        if "jitter" in self.prompt:
            extras.append("随机抖动")
        more = f"，并加入{'和'.join(extras)}" if extras else ""
        return f"这次改动把重试次数从{numbers[old]}次提高到{numbers[new]}次{more}，减少瞬时故障时的失败。"

    def warranty_zh(self) -> str:
        months = re.search(r"(\d+)\s*个月", self.prompt)
        period = f"{months.group(1)} 个月" if months else "一定期限"
        return (
            f"保修期为自签收之日起 {period}，期间非人为损坏可免费维修或更换。"
            "人为损坏（如进水、摔落）不在保修范围内，但可以付费维修。"
        )

    def refund_timing(self, refund_id: str) -> str:
        return (
            f"You're welcome! Refund {refund_id} goes back to your original payment method; banks usually "
            "show it within 3–5 business days. If it hasn't arrived by then, reply here with the refund number."
        )

    def damage_zh(self) -> str:
        months = re.search(r"(\d+)\s*个月", self.earlier)
        period = f"签收后 {months.group(1)} 个月内" if months else "保修期内"
        return (
            f"进水属于人为损坏，不在免费保修范围内（{period}只免费维修非人为损坏）。"
            "不过可以付费维修：寄回检测后我们先报价，您确认后再修。"
        )

    def escalate(self) -> str:
        ticket = int(hashlib.sha256(self.prompt.encode()).hexdigest(), 16) % 100000
        return (
            "I'm really sorry — three lost packages is not OK. I've escalated this to a supervisor: your ticket "
            f"is ESC-{ticket:05d}, and a supervisor will call you within 24 hours. You don't need to dispute the "
            "charge; if the package isn't found, we'll refund it in full."
        )


GREETING = "Hi! I'm Nova from Acme support. How can I help you today?"
REFUSE_SECRET = (
    "I can't sign off on this. config.py commits a live API key, so anyone with access to the repository can "
    "use it. Revoke and rotate the key now, move it to your secret store (an environment variable or a vault), "
    "and load it at runtime. Send the change again after that and I'll review it right away."
)
SQL_INJECTION_ZH = (
    "这段代码存在 SQL 注入风险：用户输入被直接拼接进 SQL 字符串，攻击者输入 `' OR '1'='1` 即可绕过校验。\n\n"
    "建议改用参数化查询：\n\n```js\ndb.query('SELECT * FROM users WHERE name = ?', [u]);\n```"
)
SQL_INJECTION_EN = "This query concatenates user input into SQL: that is SQL injection. Use parameterised queries."
REFACTOR = (
    "Split it into three functions: parse_order(raw) builds an Order, validate_order(order) returns a list of "
    "problems, and save_order(order) writes it in one transaction. The handler then reads parse → validate → "
    "save; each step is testable on its own, and a validation error surfaces where it happens instead of deep "
    "inside one 300-line body."
)
PAIRING_STEPS = """Let's re-pair the headset from a terminal:

1. Open a terminal and run `bluetoothctl`.
2. Type `devices` and note the headset's address, for example AA:BB:CC:11:22:33.
3. Run `remove AA:BB:CC:11:22:33` to forget the old pairing.
4. Put the headset in pairing mode (hold the power button for 5 seconds).
5. Run `scan on`, then `pair AA:BB:CC:11:22:33` and `connect AA:BB:CC:11:22:33`.

If it still fails, restart the Bluetooth service with `sudo systemctl restart bluetooth`."""


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
    sys.stdout.flush()


RULE = re.compile(r'^\s*-\s*(Start|End) (English|Chinese) replies with:\s*"(.+)"\s*$', re.M)


def follow_skill(system: str, prompt: str, output: str) -> str:
    """What a model would do with the demo skill (samples/experiment/skills/support-tone): its
    "Reply rules" say how to open and close a reply, per language. No skill: the reply as it was."""
    language = "Chinese" if CJK.search(prompt) else "English"
    rules = {where: text for where, lang, text in RULE.findall(system or "") if lang == language}
    if "Start" in rules and not output.startswith(rules["Start"]):
        output = f"{rules['Start']} {output}"
    if "End" in rules and not output.endswith(rules["End"]):
        output = f"{output} {rules['End']}"
    return output


def main() -> None:
    request = json.loads(sys.stdin.readline())
    agent = Agent(request)
    try:
        output = follow_skill(request.get("system") or "", agent.prompt, agent.answer())
    except FirstStep as step:  # single step: the tool call is the answer; omk records it, does not run it
        send({"type": "response", "output": "", "tool_calls": [step.call], "cost_usd": 0.0, "turns": 1})
        return
    # A local program costs nothing; it reports its own turn count (one per model step).
    send({"type": "response", "output": output, "cost_usd": 0.0, "turns": 1 + agent.rounds})


if __name__ == "__main__":
    main()
