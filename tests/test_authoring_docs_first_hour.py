"""The authoring commands of the docs run as written, in order, in a fresh copy of the repository
after the README's install (its activation line, then a bare `omk`): docs/authoring.md's recorded
run and `omk sample --from-run`, docs/judge.md's `omk gold init` and `omk gold check`,
docs/experiments.md's `--ablate` and `omk power`, docs/ci.md's shards, `omk merge` and `omk
verdict`, docs/view.md's `omk view --export`. Each command is read from its page, so the test
fails when a page and the CLI drift apart.

Substitutions, each because a test cannot do the real thing, and nothing else:
* `claude:sonnet` is the pinned Claude Code CLI (OMK_CLAUDE) against a scripted model on 127.0.0.1
  (ANTHROPIC_BASE_URL) that greets Ada, as the README's `omk init` samples ask;
* a page's placeholder is given a value: `RUN_DIR` the run just made, ci.md's `I/N` shards 1/2
  and 2/2 (`shard-1 shard-2 … shard-N` the two folders), its `evals/` the bundled experiment
  (a link to samples/experiment);
* the labels `omk gold init` writes are filled in by the test, as judge.md's step 2 asks a person.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from fresh_copy import ACTIVATE, copy_repo

from omk.testing import ModelServer
from omk.testing.anthropic import text_reply

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SHARDS = 2


def sh_lines(page: str, marker: str) -> list[str]:
    """The command lines of the page's first ```sh block holding `marker`, as written."""
    text = (DOCS / page).read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```sh\n(.*?)```", text, flags=re.S) if marker in b)
    return [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]


def inline(page: str, start: str) -> str:
    """The page's first inline command (in backticks) starting with `start`."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return next(c for c in re.findall(r"`([^`\n]+)`", text) if c.startswith(start))


def shards(lines: list[str]) -> list[str]:
    """ci.md's block for N shards: its `I/N` line once per shard, its `… shard-N` spelled out."""
    out: list[str] = []
    for line in lines:
        if "I/N" in line:
            out += [line.replace("I/N", f"{i}/{SHARDS}").replace("shard-I", f"shard-{i}") for i in range(1, SHARDS + 1)]
        else:
            out.append(line.replace("shard-1 shard-2 … shard-N", " ".join(f"shard-{i}" for i in range(1, SHARDS + 1))))
    return out


def authoring_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    init = re.findall(r"^ *\.venv/bin/(omk init .*)$", readme, flags=re.M)[0]  # the README's, with its bare `omk`
    return [
        init,
        *sh_lines("authoring.md", "--from-run"),
        inline("judge.md", "omk gold init RUN_DIR").replace("RUN_DIR", '"$RUN"'),
        "FILL labels.jsonl",
        inline("judge.md", "omk gold check RUN_DIR").replace("RUN_DIR", '"$RUN"'),
        *sh_lines("experiments.md", "--ablate"),
        "NEWEST .omk/runs",  # RUN_DIR is now the ablation just run
        inline("experiments.md", "omk power RUN_DIR").split(" [")[0].replace("RUN_DIR", '"$RUN"'),
        "ln -s samples/experiment evals",
        *shards(sh_lines("ci.md", "--shard")),
        next(c for c in sh_lines("view.md", "--export") if "--export" in c).split("#")[0].strip(),
    ]


def fill(labels: Path) -> None:
    rows = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines() if line.strip()]
    labels.write_text("".join(json.dumps({**r, "score": 5, "pass": True, "rater": "ada"}) + "\n" for r in rows), encoding="utf-8")


def test_the_authoring_commands_are_read_from_the_pages():
    commands = authoring_commands()
    assert any(c.startswith("omk sample --from-run ") for c in commands)
    assert any(" --shard 2/2 " in c for c in commands)
    assert any(c.startswith("omk merge shard-1 shard-2 --out") for c in commands)
    assert commands[-1] == "omk view --export site/"
    assert "…" not in " ".join(commands)
    assert "RUN_DIR" not in " ".join(commands)


def test_the_authoring_commands_run_as_written_after_the_readme_install(tmp_path):
    from claude_support import require_claude

    claude = require_claude()
    repo = copy_repo(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMK_", "OPENAI_", "ANTHROPIC_", "CLAUDE_", "VIRTUAL_ENV"))}
    env.update(NO_COLOR="1", COLUMNS="100", OMK_CLAUDE=claude, HOME=str(tmp_path), ANTHROPIC_API_KEY="offline")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not Path(p, "omk").exists())
    said: dict[str, str] = {}
    run = ".omk/runs/recorded"  # RUN_DIR: the recorded run, then the ablation
    with ModelServer(lambda _request: text_reply("Hello, Ada!")) as model:
        env["ANTHROPIC_BASE_URL"] = model.url
        for command in authoring_commands():
            if command.startswith("FILL "):
                fill(repo / command.split()[1])
            elif command.startswith("NEWEST "):
                run = str(max((repo / command.split()[1]).iterdir(), key=lambda p: p.stat().st_mtime_ns).relative_to(repo))
            else:
                script = f"{ACTIVATE}\nRUN={run}\n{command}"
                proc = subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True, text=True, timeout=900)
                assert proc.returncode == 0, f"{command}\n{proc.stdout}\n{proc.stderr}"
                assert "command not found" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
                said[command.split(" RUN_DIR")[0].split(' "$RUN"')[0]] = proc.stdout + proc.stderr
    recorded = (repo / "my-evals" / "recorded.yaml").read_text(encoding="utf-8")
    assert "provenance: production-trace" in recorded
    assert "reference: Hello, Ada!" in recorded
    assert "1 sample recorded from .omk/runs/recorded" in said["omk sample --from-run .omk/runs/recorded --output my-evals/recorded.yaml"]
    assert "Judge against people" in said["omk gold check"]
    assert "paired t-test" in said["omk power"]
    assert (repo / "merged" / "report.json").exists()
    assert (repo / "site" / "index.html").exists()
