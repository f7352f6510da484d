"""What the budget tests and the hint tests share: `omk` in a child pointed at a scripted OpenAI
server, and a samples file of N weather questions."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml
from cli_support import run_omk

ROOT = Path(__file__).resolve().parent.parent


def omk(*args: str, cwd: Path, url: str) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": url}, columns=200, timeout=120)


def write_samples(folder: Path, n: int, *, rubric: bool = False, url: bool = False) -> Path:
    samples = []
    for i in range(n):
        prompt = f"question number {i} about the weather in a city" + (" see https://docs.acme.com/page" if url and i == 0 else "")
        sample = {"sample_id": f"s{i}", "prompt": prompt, "assertions": [{"type": "contains", "value": "ok"}]}
        if rubric:
            sample["rubric"] = "answers the question"
        samples.append(sample)
    path = folder / "eval-samples.yaml"
    path.write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    return path
