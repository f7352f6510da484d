"""Planning and budgets: `--dry-run` calls nothing and prices the plan; `--budget-usd` stops new
calls once the spend reaches it, keeps what finished, exits 3, and `--resume` continues."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from omk.testing import ModelServer
from omk.testing.openai_chat import text_reply

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


def test_dry_run_makes_no_call_and_prices_target_and_judge(tmp_path):
    path = write_samples(tmp_path, 3, rubric=True, url=True)
    with ModelServer.for_openai([text_reply("ok")]) as fake:
        proc = omk(
            "eval", str(path), "--target", "openai:gpt-4o-mini", "--judge", f"openai:mystery-judge@{fake.url}",
            "--repeat", "2", "--dry-run", cwd=tmp_path, url=fake.url,
        )
        assert fake.requests == []  # no call of any kind: no preflight, no judge, no URL fetched
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "6 sample run(s)" in out
    assert "target gpt-4o-mini: 6 call(s)" in out
    assert "judge mystery-judge: 6 call(s)" in out and "no known price" in out
    assert "mystery-judge" in out.split("not counted")[1]
    assert "1 URL(s) in prompts not fetched" in out
    assert not (tmp_path / ".omk" / "runs").exists()  # no run folder written


def test_dry_run_estimate_counts_tokens_and_prices_known_models(tmp_path, monkeypatch):
    from omk.engine import EvalOptions, Evaluation
    from omk.engine.estimate import DEFAULT_OUTPUT_TOKENS, estimate

    path = write_samples(tmp_path, 2)
    with ModelServer.for_openai([text_reply("ok")]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        options = EvalOptions(samples=[str(path)], target="openai:gpt-4o", dry_run=True, no_cache=True)
        ev = Evaluation.prepare(options, cwd=tmp_path)
        plan = estimate([ev])
        assert fake.requests == []
    (line,) = plan.lines
    assert (line.role, line.name, line.calls) == ("target", "gpt-4o", 2)
    assert line.input_tokens == 2 * 9  # "question number N about the weather in a city": 9 words
    assert line.output_tokens == 2 * DEFAULT_OUTPUT_TOKENS
    assert plan.cost_usd == round((18 * 2.5 + 2 * DEFAULT_OUTPUT_TOKENS * 10.0) / 1e6, 6)
    assert plan.unpriced == []


def test_dry_run_takes_output_tokens_from_the_cache(tmp_path):
    path = write_samples(tmp_path, 2)
    with ModelServer.for_openai(lambda request: text_reply("ok fine", completion_tokens=37)) as fake:
        target = "openai:gpt-4o"
        first = omk("eval", str(path), "--target", target, cwd=tmp_path, url=fake.url)
        assert first.returncode == 0, first.stdout + first.stderr
        calls = len(fake.requests)
        proc = omk("eval", str(path), "--target", target, "--dry-run", cwd=tmp_path, url=fake.url)
        assert len(fake.requests) == calls
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "~74 output tokens" in proc.stdout and "from the cache for 2 target call(s)" in proc.stdout


def test_dry_run_of_an_experiment_counts_every_variant(tmp_path):
    path = write_samples(tmp_path, 2)
    with ModelServer.for_openai([text_reply("ok")]) as fake:
        proc = omk(
            "eval", str(path), "--target", "openai:gpt-4o", "--target", "openai:gpt-4o-mini",
            "--no-judge", "--dry-run", cwd=tmp_path, url=fake.url,
        )
        assert fake.requests == []
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 sample run(s) to do over 2 variants" in proc.stdout
    assert "target gpt-4o: 2 call(s)" in proc.stdout and "target gpt-4o-mini: 2 call(s)" in proc.stdout
