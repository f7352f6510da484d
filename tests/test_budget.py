"""Planning and budgets: `--dry-run` calls nothing and prices the plan; `--budget-usd` stops new
calls once the spend reaches it, keeps what finished, exits 3, and `--resume` continues."""

from __future__ import annotations

import json

import pytest
from budget_support import omk, write_samples

from omk.testing import ModelServer
from omk.testing.openai_chat import text_reply


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
    assert "judge mystery-judge: 6 call(s)" in out
    assert "no known price" in out
    assert "at least $" in out  # the judge is not priced: the total is a floor
    assert "mystery-judge" in out.split("  not counted (")[1]
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
    assert "~74 output tokens" in proc.stdout
    assert "from the cache for 2 target call(s)" in proc.stdout


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
    assert "target gpt-4o: 2 call(s)" in proc.stdout
    assert "target gpt-4o-mini: 2 call(s)" in proc.stdout


def test_a_budget_stops_new_calls_keeps_what_finished_and_resumes(tmp_path):
    path = write_samples(tmp_path, 10)
    run = tmp_path / "run"
    reply = text_reply("ok", prompt_tokens=100_000, completion_tokens=0)  # gpt-4o: $0.25 a call
    with ModelServer.for_openai(lambda request: reply) as fake:
        proc = omk("eval", str(path), "--target", "openai:gpt-4o", "--out", str(run), "--concurrency", "2", "--budget-usd", "1",
                   "--format", "json,md,junit,html", cwd=tmp_path, url=fake.url)
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert "budget reached" in proc.stderr
        assert f"omk eval --resume {run}" in proc.stderr
        first_calls = len(fake.requests)
        report = json.loads((run / "report.json").read_text(encoding="utf-8"))
        budget = report["budget"]
        assert budget["limit_usd"] == 1
        assert budget["stopped"] is True
        assert 1.0 <= budget["spent_usd"] <= 1.0 + 2 * 0.25  # within one call per concurrent slot
        assert budget["spent_usd"] == pytest.approx(0.25 * first_calls)
        finished = [r["sample_id"] for r in report["results"]]
        assert len(finished) == first_calls < 10
        assert all(r["status"] == "ok" for r in report["results"])
        assert [n["sample_id"] for n in budget["not_run"]] == [f"s{i}" for i in range(10) if f"s{i}" not in finished]
        assert all(n["reason"] == "budget" for n in budget["not_run"])
        left = budget["not_run"][0]["sample_id"]
        assert "budget reached" in proc.stdout  # the terminal summary
        for name in ("summary.md", "report.html"):
            text = (run / name).read_text(encoding="utf-8")
            assert "budget reached" in text and left in text, name
        assert 'name="budget_not_run"' in (run / "junit.xml").read_text(encoding="utf-8")

        again = omk("eval", "--resume", str(run), cwd=tmp_path, url=fake.url)
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(fake.requests) == 10  # only what was not run is called now
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert sorted(r["sample_id"] for r in report["results"]) == sorted(f"s{i}" for i in range(10))
    assert "budget" not in report  # the resume had no budget


def test_the_judge_spend_counts_against_the_budget(tmp_path):
    from judge_support import by_model, score_json

    path = write_samples(tmp_path, 8, rubric=True)
    run = tmp_path / "run"
    dear = {"prompt_tokens": 100_000, "completion_tokens": 0}  # gpt-4o: $0.25 a call
    respond = by_model({"local-model": text_reply("ok"), "gpt-4o": text_reply(score_json(4), **dear)})
    with ModelServer.for_openai(respond) as fake:
        proc = omk(
            "eval", str(path), "--target", "openai:local-model", "--judge", f"openai:gpt-4o@{fake.url}", "--out", str(run),
            "--concurrency", "1", "--budget-usd", "0.5", cwd=tmp_path, url=fake.url,
        )
        judged = sum(1 for r in fake.requests if r.json["model"] == "gpt-4o")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert judged == 2
    assert len(report["results"]) == 2  # the target is free; the judge's $0.25 a sample stops it
    assert report["budget"]["spent_usd"] == pytest.approx(0.5)
    assert len(report["budget"]["not_run"]) == 6


def test_budget_per_sample_in_omk_yaml(tmp_path):
    path = write_samples(tmp_path, 4)
    (tmp_path / "omk.yaml").write_text("budget_per_sample_usd: 0.125\nconcurrency: 1\n", encoding="utf-8")
    reply = text_reply("ok", prompt_tokens=100_000, completion_tokens=0)
    with ModelServer.for_openai(lambda request: reply) as fake:
        proc = omk("eval", str(path), "--target", "openai:gpt-4o", "--out", str(tmp_path / "run"), cwd=tmp_path, url=fake.url)
        assert len(fake.requests) == 2  # $0.50 for 4 samples: two calls of $0.25
    assert proc.returncode == 3, proc.stdout + proc.stderr


def test_an_experiment_shares_one_budget_and_resumes(tmp_path):
    path = write_samples(tmp_path, 6)
    run = tmp_path / "run"
    reply = text_reply("ok", prompt_tokens=100_000, completion_tokens=0)  # gpt-4o $0.25, gpt-4o-mini $0.015 a call
    with ModelServer.for_openai(lambda request: reply) as fake:
        proc = omk(
            "eval", str(path), "--target", "openai:gpt-4o", "--target", "openai:gpt-4o-mini", "--no-judge", "--out", str(run),
            "--concurrency", "1", "--budget-usd", "0.5", cwd=tmp_path, url=fake.url,
        )
        assert proc.returncode == 3, proc.stdout + proc.stderr
        first = len(fake.requests)
        assert first < 12
        assert "budget reached" in proc.stderr
        again = omk("eval", "--resume", str(run), cwd=tmp_path, url=fake.url)
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(fake.requests) == 12  # each variant's six samples, none twice
