#!/usr/bin/env python3
"""The scripted improver of `omk evolve` (samples/evolve/): a `cmd:` program that answers every
request with the same three kinds of candidate, each the current SKILL.md with a new description:

1. a change with no effect: the description reworded with words no prompt uses;
2. a change that overfits: the product names of the train prompts that missed, added to the
   description (they fire those train prompts and nothing else);
3. a real fix: the description also covers the "changelog" phrasing.

It reads only what omk sends it (the current SKILL.md and the train failures) and keeps no state.
`--record FILE` appends each request to FILE (the tests read what the improver was shown);
`--offer none,fix` offers only those kinds, in that order (`none`, `overfit`, `fix`; all three by
default), for a loop of fewer candidates a round.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

KINDS = ("none", "overfit", "fix")


def with_description(skill: str, text: str) -> str:
    return re.sub(r"^description:.*$", lambda _: f"description: {text}", skill, count=1, flags=re.M)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record")
    parser.add_argument("--offer", default=",".join(KINDS))
    args = parser.parse_args()
    offer = args.offer.split(",")
    if not offer or not set(offer) <= set(KINDS):
        parser.error(f"--offer: a comma-separated list of {', '.join(KINDS)}")
    request = json.loads(sys.stdin.readline() or "{}")
    prompt = request.get("prompt") or ""
    if args.record:
        with open(args.record, "a", encoding="utf-8") as record:
            record.write(json.dumps({"request": prompt}) + "\n")
    current = re.search(r"<current>\n(.*?)</current>", prompt, re.S)
    skill = current.group(1) if current else ""
    old = re.search(r"^description:\s*(.*)$", skill, re.M)
    base = old.group(1).strip() if old else ""
    missed = re.findall(r"^Prompt: .*?\b(?:for|of) ([A-Z][a-z]+)\b", prompt, re.M)
    names = sorted(set(missed))[:8]
    candidates = {
        "none": with_description(skill, base.rstrip(".") + ", in a calm and tidy tone."),
        "overfit": with_description(skill, base.rstrip(".") + " (" + ", ".join(names or ["Nothing"]) + ")."),
        "fix": with_description(skill, base.rstrip(".") + ", or a changelog summary."),
    }
    answer = "".join(f"<candidate>\n{candidates[kind].rstrip()}\n</candidate>\n" for kind in offer)
    sys.stdout.write(json.dumps({"type": "response", "output": answer}) + "\n")


if __name__ == "__main__":
    main()
