"""`omk init`: a starter sample file and settings, never overwriting what exists."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_OK
from omk.core.errors import InputError

SAMPLES = """\
# yaml-language-server: $schema=eval-samples.schema.json
samples:
  - sample_id: greet-001
    prompt: "Say hello to Ada in one short sentence."
    rubric: "Excellent: greets Ada by name in one friendly sentence. Poor: no name, or more than one sentence."
    capability: [greeting]
    difficulty: easy
    assertions:
      - { type: contains, value: "Ada" }
      - { type: max_length, value: 120 }
"""

RESPONSES = """\
{"sample_id": "greet-001", "output": "Hello, Ada!", "trace": {"turns": 1, "latency_ms": 420, "cost_usd": 0.0001}}
"""

CONFIG = """\
# omk settings; the command line and OMK_* environment variables override these.
target: replay:responses.jsonl   # or openai:gpt-4o-mini, anthropic:claude-3-5-haiku-latest, cmd:python agent.py
threshold: 3.5
"""


def run_init(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    from omk.schema.build import SCHEMA_FILE

    files = {
        "eval-samples.yaml": SAMPLES,
        "responses.jsonl": RESPONSES,
        "omk.yaml": CONFIG,
        # a copy of the sample-format schema, so editors complete and check offline
        "eval-samples.schema.json": SCHEMA_FILE.read_text(encoding="utf-8"),
    }
    existing = [name for name in files if (folder / name).exists()]
    if existing:
        raise InputError(f"{folder}: {', '.join(existing)} already exist; nothing was written")
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    written = [*files, ".gitignore"] if ignore_omk_folder(folder / ".gitignore") else list(files)
    from omk.report.i18n import t

    command = f"omk eval {shlex.quote(str(folder / 'eval-samples.yaml'))}"
    say(t("wrote {files} in {folder}; run: {command}", args.lang or "en").format(files=", ".join(written), folder=folder, command=command))
    return EXIT_OK


IGNORED = ".omk/"


def ignore_omk_folder(path: Path) -> bool:
    """Add `.omk/` (the cache and the run folders) to `.gitignore`, creating it or appending to it;
    False when it is there already. A cache belongs to the machine that wrote it: one committed
    and read elsewhere would be another machine's answers (docs/run.md)."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if any(line.strip() in (IGNORED, ".omk", "/.omk", "/.omk/") for line in text.splitlines()):
        return False
    lead = "" if not text or text.endswith("\n") else "\n"
    with path.open("a", encoding="utf-8") as f:
        f.write(f"{lead}# omk's response cache and run folders: this machine's, never committed\n{IGNORED}\n")
    return True
