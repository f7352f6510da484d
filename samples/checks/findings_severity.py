"""Custom hook: every finding in a JSON review must carry a severity the team uses."""

import json

ALLOWED = {"critical", "high", "medium", "low"}


def check(output: str, ctx: dict) -> dict:
    try:
        findings = json.loads(output)["findings"]
    except (ValueError, KeyError, TypeError) as exc:
        return {"pass": False, "message": f"not a findings document: {exc}"}
    bad = [f.get("id", i) for i, f in enumerate(findings) if f.get("severity") not in ALLOWED]
    return {"pass": not bad, "message": f"findings with unknown severity: {bad}" if bad else "all severities known"}
