"""Add one line to CHANGELOG.md under `## VERSION` / `### SECTION` (Keep a Changelog style).

    python3 add_entry.py 1.5.0 Added "Export reports as CSV"
"""

import sys
from pathlib import Path

SECTIONS = ("Added", "Changed", "Fixed")


def main(version: str, section: str, text: str) -> int:
    if section not in SECTIONS:
        print(f"section must be one of {', '.join(SECTIONS)}", file=sys.stderr)
        return 2
    path = Path("CHANGELOG.md")
    lines = path.read_text(encoding="utf-8").splitlines()
    heading = f"## {version}"
    if heading not in lines:
        first = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
        lines[first:first] = [heading, "", f"### {section}", f"- {text}", ""]
    else:
        start = lines.index(heading)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        block = lines[start:end]
        if f"### {section}" in block:
            at = start + block.index(f"### {section}") + 1
        else:
            lines[end:end] = [f"### {section}", ""]
            at = end + 1
        lines.insert(at, f"- {text}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"CHANGELOG.md: {heading} / {section}: {text}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
