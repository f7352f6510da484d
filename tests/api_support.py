"""A small agent program for API and plugin tests: echoes the prompt, fails on "boom", logs calls."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

AGENT = textwrap.dedent(
    """
    import json, os, sys
    request = json.loads(sys.stdin.readline())
    log = os.environ.get("OMK_TEST_CALLS")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(request["sample_id"] + "\\n")
    if "boom" in request["prompt"]:
        print("the agent crashed on purpose", file=sys.stderr)
        sys.exit(3)
    print(json.dumps({"type": "response", "output": "echo: " + request["prompt"]}))
    """
)


def write_agent(folder: Path) -> str:
    """Write the agent into `folder`; returns the `cmd:` target spec that runs it."""
    path = folder / "echo_agent.py"
    path.write_text(AGENT, encoding="utf-8")
    return f"cmd:{sys.executable} {path}"


SAMPLES_YAML = """\
samples:
  - sample_id: passes-one
    prompt: say hello
    assertions:
      - { type: contains, value: hello }
  - sample_id: fails-one
    prompt: say goodbye
    assertions:
      - { type: contains, value: "bonjour" }
      - { type: max_length, value: 3 }
  - sample_id: errors-one
    prompt: boom
    assertions:
      - { type: contains, value: boom }
  - sample_id: judged-one
    prompt: say hi politely
    rubric: The answer is polite.
    assertions:
      - { type: contains, value: politely }
"""
