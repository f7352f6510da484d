"""Resources in experiments: paired changes of cost, tokens and latency per sample with bootstrap
intervals (against scipy and by seeded simulation), `--max-cost-increase` in the verdict, and the
figures in every experiment report format."""

from __future__ import annotations

import json
import random
import sys
import textwrap

import numpy as np
import pytest
from experiment_reports import omk, synthetic_report
from experiment_support import record
from scipy import stats as sps

from omk.records.document import ReportDocument
from omk.records.experiment_block import Comparison
from omk.stats import AnalysisSettings, VariantRun, analyze, bootstrap_mean_ci, evaluate_policy
from omk.stats.bootstrap import bootstrap_paired_change, expanded_alpha

# ---------------------------------------------------------------- the intervals


def _costs(rng: random.Random, n: int, ratio: float) -> tuple[list[float], list[float]]:
    """Costs per sample that vary a lot between samples (lognormal), the treatment's `ratio` times
    the control's on average (its own noise has mean 1)."""
    control = [rng.lognormvariate(-7.0, 0.8) for _ in range(n)]
    treatment = [c * ratio * rng.lognormvariate(-0.02, 0.2) for c in control]  # E[lognormal(-σ²/2, σ)] = 1
    return control, treatment


def test_the_mean_change_interval_is_the_differences_bootstrap_with_the_same_picks():
    rng = random.Random(3)
    control, treatment = _costs(rng, 40, 1.3)
    delta, _ = bootstrap_paired_change(control, treatment, resamples=2000, seed=11)
    alone = bootstrap_mean_ci([t - c for c, t in zip(control, treatment, strict=True)], resamples=2000, seed=11)
    assert delta is not None
    assert alone is not None
    assert delta.low == pytest.approx(alone.low, abs=1e-12)
    assert delta.high == pytest.approx(alone.high, abs=1e-12)


def test_the_relative_interval_matches_scipys_paired_bootstrap_of_the_ratio_of_means():
    rng = random.Random(5)
    control, treatment = _costs(rng, 60, 1.35)
    level = 0.95
    cut = expanded_alpha(1 - level, 60)
    _, ours = bootstrap_paired_change(control, treatment, resamples=10_000, seed=1, method="percentile")
    _, wide = bootstrap_paired_change(control, treatment, resamples=10_000, seed=1)
    assert ours is not None
    assert wide is not None

    def ratio(c, t, axis=-1):
        return np.sum(t, axis=axis) / np.sum(c, axis=axis) - 1.0

    for conf, got in ((level, ours), (1 - cut, wide)):
        ref = sps.bootstrap(
            (np.array(control), np.array(treatment)), ratio, paired=True, vectorized=True, n_resamples=10_000,
            confidence_level=conf, method="percentile", random_state=np.random.default_rng(0),
        )  # fmt: skip
        se = ref.standard_error
        assert got.low == pytest.approx(ref.confidence_interval.low, abs=0.25 * se)
        assert got.high == pytest.approx(ref.confidence_interval.high, abs=0.25 * se)


def test_the_relative_interval_covers_the_true_increase_about_95_percent_of_the_time():
    """200 simulated experiments of 30 samples whose treatment costs 30% more on average: the 95%
    interval of the relative change must cover +30% in 87–99% of them. It is a ratio of sums,
    and with costs this uneven between samples (lognormal, σ = 0.8) a few dear samples weigh
    most: longer simulations put its coverage near 91%, which docs/experiments.md states. The
    mean change's interval (a plain mean of differences) is checked against 95% elsewhere."""
    rng = random.Random(8080)
    covered, runs = 0, 200
    for i in range(runs):
        control, treatment = _costs(rng, 30, 1.3)
        _, rel = bootstrap_paired_change(control, treatment, resamples=1000, seed=i)
        assert rel is not None
        covered += rel.low <= 0.3 <= rel.high
    assert 0.87 <= covered / runs <= 0.99, covered / runs


def test_no_relative_interval_when_the_control_spent_nothing_and_none_below_two_pairs():
    assert bootstrap_paired_change([0.0, 0.0, 0.0], [0.1, 0.2, 0.1], resamples=200)[1] is None
    assert bootstrap_paired_change([0.0, 0.0, 1.0], [0.1, 0.2, 1.0], resamples=500)[1] is None  # some resamples divide by 0
    assert bootstrap_paired_change([1.0], [2.0], resamples=200) == (None, None)
    with pytest.raises(ValueError, match="as many control values"):
        bootstrap_paired_change([1.0, 2.0], [1.0], resamples=200)


# ---------------------------------------------------------------- the comparison and the verdict


def _arms(cost_factor: float, n: int = 30, gain: float = 1.0) -> list[VariantRun]:
    c = {f"s{i}": [record(3.0 + (i % 3) * 0.1, cost_usd=0.01 * (1 + i % 4), input_tokens=1000 + 10 * i, output_tokens=200, latency_ms=400.0)] for i in range(n)}
    t = {
        f"s{i}": [record(3.0 + (i % 3) * 0.1 + gain, cost_usd=0.01 * (1 + i % 4) * cost_factor, input_tokens=1500 + 15 * i,
                         output_tokens=300, latency_ms=500.0 + i)]
        for i in range(n)
    }  # fmt: skip
    return [VariantRun("base", c, "control"), VariantRun("skill", t)]


def test_tokens_cost_and_latency_changes_are_paired_with_intervals():
    comp = analyze(_arms(1.5), AnalysisSettings(resamples=1000, seed=4)).comparisons[0]
    assert comp.tokens.n == 30
    assert comp.tokens.relative == pytest.approx(0.5)  # input and output both +50%
    assert comp.cost_usd.relative == pytest.approx(0.5)
    assert comp.cost_usd.relative_ci is not None
    assert comp.cost_usd.relative_ci.low == pytest.approx(0.5)
    assert comp.cost_usd.relative_ci.high == pytest.approx(0.5)  # every sample +50%
    assert comp.latency_ms.ci is not None
    assert comp.latency_ms.ci.low < comp.latency_ms.delta < comp.latency_ms.ci.high
    block = Comparison.of(comp).to_json()
    assert set(block["tokens"]) == {"n", "control", "treatment", "delta", "relative", "ci", "relative_ci"}
    assert block["cost_usd"]["relative_ci"]["level"] == 0.95
    assert block["cost_usd"]["ci"]["seed"] == 4


def test_a_cost_rise_past_the_limit_is_cautious_and_fails_require_progress():
    runs = _arms(1.5)
    free = analyze(runs, AnalysisSettings(resamples=500))
    assert free.verdict.level.value == "PROGRESS"
    capped = analyze(runs, AnalysisSettings(resamples=500, max_cost_increase=20))
    pair = capped.verdict.pairs[0]
    assert (pair.level.value, pair.reason) == ("CAUTIOUS", "cost-increase")
    assert "+50% cost [50%, 50%] > 20% allowed" in pair.headline
    assert "costs 50% more per sample than base, more than the 20% allowed" in pair.recommendation
    assert not evaluate_policy(capped.verdict, "progress").passed
    assert evaluate_policy(capped.verdict, "no-regress").passed  # dearer is not worse
    assert analyze(runs, AnalysisSettings(resamples=500, max_cost_increase=50)).verdict.level.value == "PROGRESS"  # exactly the limit
    assert "Resources: +1.00 composite for +50% tokens [50%, 50%], +50% cost [50%, 50%], +29% latency [" in "\n".join(capped.verdict.lines)


def test_a_regression_stays_a_regression_whatever_it_costs():
    worse = analyze(_arms(1.5, gain=-1.0), AnalysisSettings(resamples=500, max_cost_increase=20))
    assert worse.verdict.pairs[0].reason == "regression"


def test_the_limit_must_be_a_percentage():
    with pytest.raises(ValueError, match="max_cost_increase"):
        AnalysisSettings(max_cost_increase=-1)


# ---------------------------------------------------------------- the formats


def test_every_experiment_format_shows_the_resource_changes_with_intervals():
    from omk.report.html_report import render_html
    from omk.report.junit import render_junit
    from omk.report.markdown import render_markdown

    scores = [3.0 + (i % 3) * 0.1 for i in range(24)]
    report = synthetic_report(
        {"base": scores, "skill": [s + 1 for s in scores]}, spend={"base": 1.0, "skill": 1.35},
        settings=AnalysisSettings(resamples=2000, max_cost_increase=20),
    )  # fmt: skip
    doc = ReportDocument.from_dict(json.loads(json.dumps(report)))
    comp = doc.experiment.comparisons[0]
    assert comp.tokens.relative is not None
    assert comp.tokens.relative_ci is not None
    assert comp.cost_usd.ci is not None
    assert doc.experiment.settings.max_cost_increase == 20
    md, page, junit = render_markdown(doc), render_html(doc), render_junit(doc)
    for text in (md, page):
        assert "% cost [" in text
        assert "&gt; 20% allowed" in text  # the headline names the reason
        assert "Resources: +1.00 composite for +" in text
        assert "% tokens [" in text
        assert "tokens +" in text  # the comparison's resource line
    assert "% allowed" in junit  # the headline property
    assert 'name="experiment:resources:skill" value="cost +$' in junit
    assert "tokens +" in junit


# ---------------------------------------------------------------- end to end


PRICEY = textwrap.dedent(
    """
    import json, sys
    request = json.loads(sys.stdin.readline())
    dear = "PRICEY" in (request.get("system") or "")
    size = len(request["prompt"])
    print(json.dumps({"type": "response", "output": "hello " + request["prompt"],
                      "cost_usd": 0.0001 * size * (2 if dear else 1), "tokens": {"input": 10 * size, "output": 5}}))
    """
)


def test_max_cost_increase_from_omk_yaml_makes_the_run_fail_require_progress(tmp_path):
    (tmp_path / "agent.py").write_text(PRICEY, encoding="utf-8")
    samples = "".join(f'  - {{ sample_id: "s{i}", prompt: "{"x" * (i + 1)}", assertions: [{{ type: contains, value: hello }}] }}\n' for i in range(4))
    (tmp_path / "eval-samples.yaml").write_text("samples:\n" + samples, encoding="utf-8")
    (tmp_path / "omk.yaml").write_text(f"target: cmd:{sys.executable} agent.py\nmax_cost_increase: 50\n", encoding="utf-8")
    args = ["eval", "eval-samples.yaml", "--control", "baseline", "--treatment", "dear=system:PRICEY", "--no-cache", "--require", "progress"]
    proc = omk(*args, "--out", "run", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "dear CAUTIOUS (cost-increase)" in proc.stderr
    assert "+100% cost [100%, 100%] > 50% allowed" in proc.stdout
    block = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))["experiment"]
    assert block["settings"]["max_cost_increase"] == 50
    assert block["comparisons"][0]["tokens"]["relative"] == 0.0
    assert json.loads((tmp_path / "run" / "experiment.json").read_text(encoding="utf-8"))["max_cost_increase"] == 50
    loose = omk(*args, "--max-cost-increase", "150%", "--out", "run2", cwd=tmp_path)  # the command line wins
    assert "cost-increase" not in loose.stdout + loose.stderr


def test_a_bad_limit_is_one_clear_line(tmp_path):
    proc = omk("eval", "x.yaml", "--max-cost-increase", "lots", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--max-cost-increase: expected a number from 0 to 1,000,000 percent, got 'lots'" in proc.stderr
    (tmp_path / "omk.yaml").write_text("max_cost_increase: -5\n", encoding="utf-8")
    (tmp_path / "eval-samples.yaml").write_text("- { sample_id: a, prompt: hi }\n", encoding="utf-8")
    proc = omk("eval", "eval-samples.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    assert "omk.yaml:1" in proc.stderr
    assert "max_cost_increase" in proc.stderr
    assert "Traceback" not in proc.stderr
