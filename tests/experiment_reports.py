"""Experiment run folders for the report tests: the bundled experiment (PROGRESS), the same with the
arms swapped (a REGRESS), and one whose treatment crashes on a sample (errored results), each run
by the real CLI with every format (the session's fixtures in conftest.py run them once); and
synthetic experiment reports built with `analyze`."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from cli_support import run_omk

from omk.records.experiment_block import ExperimentBlock
from omk.stats import AnalysisSettings, Record, VariantRun, analyze

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "samples" / "experiment"
SKILL = EXPERIMENT / "skills" / "support-tone"


def omk(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_omk(*args, cwd=cwd, columns=120)


def bundled_run(out: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The bundled experiment run by the CLI into `out` with every format; `extra` adds flags."""
    proc = omk("eval", str(EXPERIMENT / "eval-samples.yaml"), "--seed", "7", "--out", str(out), "--no-cache", "--format", "md,html,junit", *extra)
    return proc, out


# Answers "hello"; with a system prompt saying CRASH it crashes on the prompt "fragile".
CRASHY = textwrap.dedent(
    """
    import json, sys
    request = json.loads(sys.stdin.readline())
    if "CRASH" in (request.get("system") or "") and "fragile" in request["prompt"]:
        print("crashed on purpose", file=sys.stderr)
        sys.exit(3)
    print(json.dumps({"type": "response", "output": "hello " + request["prompt"]}))
    """
)

CRASHY_SAMPLES = """\
samples:
  - { sample_id: "greets", prompt: "say it", assertions: [{ type: contains, value: hello }] }
  - { sample_id: "fragile", prompt: "fragile one", assertions: [{ type: contains, value: hello }] }
  - { sample_id: "never", prompt: "say it", assertions: [{ type: contains, value: bonjour }] }
"""


def crashing_run(folder: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """A treatment that errors on one sample, run by the CLI in `folder`: an <error> in JUnit, an
    errored row in the reports."""
    (folder / "agent.py").write_text(CRASHY, encoding="utf-8")
    (folder / "eval-samples.yaml").write_text(CRASHY_SAMPLES, encoding="utf-8")
    proc = omk(
        "eval", "eval-samples.yaml", "--target", f"cmd:{sys.executable} agent.py", "--control", "baseline",
        "--treatment", "crashy=system:CRASH", "--out", str(folder / "run"), "--no-cache", "--format", "md,html,junit", cwd=folder,
    )  # fmt: skip
    return proc, folder / "run"


def synthetic_report(
    variants: dict[str, list[float | None]],
    *,
    repeats: int = 1,
    settings: AnalysisSettings | None = None,
    ids: list[str] | None = None,
    spend: dict[str, float] | None = None,
) -> dict[str, Any]:
    """An experiment report from composites per variant (the first is the control; None: errored),
    with the block's `runs[name].results` as the engine writes them. `spend`: per variant, a
    factor on each sample's cost, tokens and latency (which differ from sample to sample)."""
    n = len(next(iter(variants.values())))
    ids = ids or [f"s{i:03d}" for i in range(n)]
    runs = []
    cases: dict[str, list[dict[str, Any]]] = {}
    for k, (name, scores) in enumerate(variants.items()):
        samples: dict[str, list[Record]] = {}
        for i, (sid, score) in enumerate(zip(ids, scores, strict=True)):
            for rep in range(repeats):
                ok = score is not None
                passed = ok and score >= 3.5
                factor = (spend or {}).get(name)
                size = 1 + (int(sid[-3:]) if sid[-3:].isdigit() else len(sid)) % 5  # samples differ in size
                factor = None if factor is None else factor * (1 + 0.03 * ((i * 3 + k) % 4))  # and arms a little per sample
                used = {} if factor is None else {
                    "cost_usd": round(0.001 * size * factor * (1 + 0.1 * (rep % 2)), 6),
                    "input_tokens": int(800 * size * factor), "output_tokens": int(200 * size * factor) + 7 * rep,
                    "latency_ms": 300.0 * size * factor,
                }  # fmt: skip
                samples.setdefault(sid, []).append(
                    Record(status="ok" if ok else "error", composite=score, layers={"fact": score} if ok else {}, passed=passed, **used)
                )
                messages = [] if passed else ["error: the agent crashed"] if not ok else [f"below threshold 3.5: fact {score:.2f}"]
                cases.setdefault(name, []).append(
                    {"sample_id": sid, "repeat": rep, "status": "ok" if ok else "error", "passed": passed,
                     "composite": score, "duration_ms": 12.5, "messages": messages}
                )  # fmt: skip
        runs.append(VariantRun(name, samples, "control" if k == 0 else "treatment"))
    block = ExperimentBlock.of(analyze(runs, settings or AnalysisSettings(resamples=2000))).to_json()
    block["runs"] = {name: {"variant": {"name": name}, "report": f"variants/{name}", "target": {"spec": "cmd:x"}, "results": cases[name]} for name in variants}
    return {
        "format": "omk-report/1",
        "run_id": "20250101-000000-abcdef",
        "started_at": "2025-01-01T00:00:00+00:00",
        "summary": {"threshold": 3.5, "total": n, "passed": 0, "scores": {}},
        "results": [],
        "experiment": block,
    }
