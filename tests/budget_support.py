"""What the budget tests and the hint tests share: `omk` in a child pointed at a scripted OpenAI
server, and a samples file of N weather questions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def omk(*args: str, cwd: Path, url: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": url, "PYTHONPATH": str(ROOT)}
    env.pop("OMK_TARGET", None)
    env.pop("OMK_JUDGE", None)
    return subprocess.run([sys.executable, "-m", "omk", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


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
