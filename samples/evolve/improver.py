#!/usr/bin/env python3
"""The scripted improver of `omk evolve` (samples/evolve/): a `cmd:` program that answers every
request with the same three kinds of candidate, each the current SKILL.md with a new description:

1. a change with no effect: the description reworded with words no prompt uses;
2. a change that overfits: the product names of the train prompts that missed, added to the
   description (they fire those train prompts and nothing else);
3. a real fix: the description also covers the "changelog" phrasing.

It reads only what omk sends it (the current SKILL.md and the train failures) and keeps no state.
`--record FILE` appends each request to FILE (the tests read what the improver was shown).
"""

from __future__ import annotations

import json
import re
import sys


def with_description(skill: str, text: str) -> str:
    return re.sub(r"^description:.*$", lambda _: f"description: {text}", skill, count=1, flags=re.M)


def main() -> None:
    request = json.loads(sys.stdin.readline() or "{}")
    prompt = request.get("prompt") or ""
    if len(sys.argv) == 3 and sys.argv[1] == "--record":
        with open(sys.argv[2], "a", encoding="utf-8") as record:
            record.write(json.dumps({"request": prompt}) + "\n")
    current = re.search(r"<current>\n(.*?)</current>", prompt, re.S)
    skill = current.group(1) if current else ""
    old = re.search(r"^description:\s*(.*)$", skill, re.M)
    base = old.group(1).strip() if old else ""
    missed = re.findall(r"^Prompt: .*?\b(?:for|of) ([A-Z][a-z]+)\b", prompt, re.M)
    names = sorted(set(missed))[:8]
    candidates = [
        with_description(skill, base.rstrip(".") + ", in a calm and tidy tone."),
        with_description(skill, base.rstrip(".") + " (" + ", ".join(names or ["Nothing"]) + ")."),
        with_description(skill, base.rstrip(".") + ", or a changelog summary."),
    ]
    answer = "".join(f"<candidate>\n{c.rstrip()}\n</candidate>\n" for c in candidates)
    sys.stdout.write(json.dumps({"type": "response", "output": answer}) + "\n")


if __name__ == "__main__":
    main()
