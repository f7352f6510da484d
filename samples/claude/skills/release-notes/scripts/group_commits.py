"""Group `git log --oneline` lines (read on stdin) by conventional-commit type, as JSON."""

import json
import re
import sys

LINE = re.compile(r"^(?P<hash>[0-9a-f]{5,40})\s+(?P<type>\w+)(\([^)]*\))?(?P<breaking>!)?:\s*(?P<subject>.+)$")


def main() -> None:
    groups: dict[str, list[str]] = {}
    for line in sys.stdin:
        match = LINE.match(line.strip())
        if not match:
            continue
        kind = "breaking" if match["breaking"] else match["type"]
        groups.setdefault(kind, []).append(f"{match['subject']} ({match['hash'][:7]})")
    json.dump(groups, sys.stdout, ensure_ascii=False, indent=2)


if __name__ == "__main__":
    main()
