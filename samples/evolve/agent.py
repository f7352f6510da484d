#!/usr/bin/env python3
"""The demo agent of `omk evolve` (samples/evolve/): whether it uses the skill depends on the skill's
description, as a model's choice does.

omk runs it once per sample (`target: cmd:python agent.py`) and writes one JSON request line to
stdin; the skill's SKILL.md is the request's `system`. The agent reads the description from its
front matter and uses the skill when the prompt shares a word of five letters or more with it
(a few common words aside); it then reports a `Skill` tool call, which `skill_used` counts, and
answers as the skill says. No model, no network: the same request always gets the same answer.
`--record FILE` appends each prompt it answers to FILE (the tests count the runs with it).
"""

from __future__ import annotations

import json
import re
import sys

COMMON = {"about", "asked", "being", "could", "drafts", "every", "their", "there", "these", "which", "would", "write", "writes"}
WORD = re.compile(r"[a-z]{5,}")
COST_USD = 0.001  # what each answer reports having cost, as a model's would (the budget has something to count)


def description(system: str) -> str:
    match = re.search(r"^description:\s*(.*)$", system, re.M)
    return match.group(1).strip().strip("\"'") if match else ""


def uses_skill(system: str, prompt: str) -> bool:
    terms = set(WORD.findall(description(system).lower())) - COMMON
    return bool(terms & set(WORD.findall(prompt.lower())))


def main() -> None:
    request = json.loads(sys.stdin.readline() or "{}")
    prompt, system = request.get("prompt") or "", request.get("system") or ""
    if len(sys.argv) == 3 and sys.argv[1] == "--record":
        with open(sys.argv[2], "a", encoding="utf-8") as record:
            record.write(json.dumps({"prompt": prompt, "description": description(system)}) + "\n")
    if uses_skill(system, prompt):
        reply = {"type": "response", "output": "# Release notes\n\n- New: what changed, one line each.", "tool_calls": [{"tool": "Skill", "input": {"skill": "release-notes"}}]}
    else:
        reply = {"type": "response", "output": "Here is a general answer."}
    reply["cost_usd"] = COST_USD
    sys.stdout.write(json.dumps(reply) + "\n")


if __name__ == "__main__":
    main()
