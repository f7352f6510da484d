"""`omk power`: the minimum detectable effect and the samples needed, against statsmodels'
power functions; the split of the spread into between-sample and run-to-run parts by seeded
simulation; the command on a real run folder."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from cli_support import run_omk
from scipy import stats as sps

from omk.stats.paired import min_detectable_effect, samples_needed
from omk.stats.power import PowerFigures, SpreadParts, paired_parts, single_parts

power_mod = pytest.importorskip("statsmodels.stats.power")
ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("sd", [0.3, 0.8, 1.5])
@pytest.mark.parametrize("effect", [0.1, 0.25, 0.5])
def test_samples_needed_matches_statsmodels(sd, effect):
    exact = power_mod.TTestPower().solve_power(effect_size=effect / sd, nobs=None, alpha=0.05, power=0.8, alternative="two-sided")
    ours = samples_needed(sd, effect)
    assert ours is not None
    if exact >= 10:
        assert abs(ours - math.ceil(exact)) <= 1, (ours, exact)
    achieved = power_mod.TTestPower().power(effect_size=effect / sd, nobs=ours, alpha=0.05, alternative="two-sided")
    assert achieved >= 0.79  # at the n we give, the exact power is (about) what was asked


@pytest.mark.parametrize("n", [10, 20, 50, 200])
@pytest.mark.parametrize("sd", [0.4, 1.0])
def test_minimum_detectable_effect_matches_statsmodels(n, sd):
    d = power_mod.TTestPower().solve_power(effect_size=None, nobs=n, alpha=0.05, power=0.8, alternative="two-sided")
    assert min_detectable_effect(sd, n) == pytest.approx(d * sd, rel=0.02)


@pytest.mark.parametrize("repeats", [1, 2, 3, 5, 10])
def test_samples_needed_with_repeats_is_statsmodels_on_the_repeat_averaged_spread(repeats):
    parts = SpreadParts(samples=30, repeats=3, between_var=0.2**2, within_var=2 * 0.35**2)
    figures = PowerFigures("t", "c", parts, effect=0.15, alpha=0.05, power=0.8)
    sd = math.sqrt(0.2**2 + 2 * 0.35**2 / repeats)
    exact = power_mod.TTestPower().solve_power(effect_size=0.15 / sd, nobs=None, alpha=0.05, power=0.8)
    assert abs(figures.needed()[repeats] - math.ceil(exact)) <= 1
    mde = power_mod.TTestPower().solve_power(effect_size=None, nobs=30, alpha=0.05, power=0.8) * parts.sd(3)
    assert figures.detectable == pytest.approx(mde, rel=0.02)
    needed = figures.needed()
    assert all(needed[a] >= needed[b] for a, b in zip(sorted(needed), sorted(needed)[1:], strict=False))  # more repeats, fewer samples


def _arm(rng, bases, sd_within, repeats):
    return {f"s{i}": list(b + rng.normal(0, sd_within, repeats)) for i, b in enumerate(bases)}


def test_the_spread_splits_into_its_known_parts():
    rng = np.random.default_rng(7)
    n, reps, sd_b, sd_w = 3000, 3, 0.4, 0.3
    difficulty = rng.normal(3.5, 0.8, n)  # shared by both arms: cancels in the differences
    gain = rng.normal(0.2, sd_b, n)
    control = _arm(rng, difficulty, sd_w, reps)
    treatment = _arm(rng, difficulty + gain, sd_w, reps)
    parts = paired_parts(treatment, control)
    assert parts is not None
    assert parts.samples == n
    assert parts.repeats == reps
    assert math.sqrt(parts.between_var) == pytest.approx(sd_b, rel=0.08)
    assert parts.within_var == pytest.approx(2 * sd_w**2, rel=0.08)
    single = single_parts(control)
    assert single is not None
    assert single.within_var == pytest.approx(2 * sd_w**2, rel=0.08)
    assert math.sqrt(single.between_var) == pytest.approx(0.8, rel=0.08)


def test_the_samples_needed_reach_the_power_in_simulation():
    """Run experiments of the size omk asks for: about 80% of them find the difference."""
    rng = np.random.default_rng(11)
    sd_b, sd_w, reps, effect = 0.3, 0.5, 2, 0.2
    parts = SpreadParts(40, reps, sd_b**2, 2 * sd_w**2)
    n = PowerFigures("t", "c", parts, effect, 0.05, 0.8).needed()[reps]
    assert n is not None
    found = 0
    trials = 1000
    for _ in range(trials):
        gain = rng.normal(effect, sd_b, n)
        noise = rng.normal(0, sd_w, (n, reps)).mean(axis=1) - rng.normal(0, sd_w, (n, reps)).mean(axis=1)
        found += sps.ttest_1samp(gain + noise, 0.0).pvalue < 0.05
    assert 0.76 <= found / trials <= 0.86


def test_omk_power_on_a_run_folder(tmp_path):
    samples, responses = ROOT / "samples" / "eval-samples.yaml", ROOT / "samples" / "responses.jsonl"
    run = tmp_path / "run"
    env = {"PYTHONPATH": str(ROOT), "NO_COLOR": "1", "PATH": "/usr/bin:/bin"}
    made = run_omk(
        "eval", str(samples), "--target", f"replay:{responses}", "--out", str(run), "--quiet",
        cwd=tmp_path, base=env, drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert made.returncode in (0, 1), made.stderr
    proc = run_omk(
        "power", str(run), "--effect", "0.5", "--json",
        cwd=tmp_path, base=env, drop=(), columns=None, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (figures,) = json.loads(proc.stdout)
    assert figures["control"] is None
    assert figures["effect"] == 0.5
    assert figures["repeats"] == 1
    assert figures["samples"] >= 2
    assert figures["run_to_run_sd"] is None
    assert {n["repeats"] for n in figures["samples_needed"]} >= {1, 2, 3}
    text = run_omk("power", str(run), cwd=tmp_path, base=env, drop=(), columns=None, timeout=60)
    assert text.returncode == 0
    assert "this run detects differences of" in text.stdout
    assert "a difference of 0.1 needs" in text.stdout
    bad = run_omk("power", str(tmp_path / "none"), cwd=tmp_path, base=env, drop=(), columns=None, timeout=60)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr


def test_omk_power_on_an_experiment_folder(tmp_path):
    from itertools import count

    from omk.testing import ModelServer
    from omk.testing.openai_chat import text_reply

    samples = tmp_path / "eval-samples.yaml"
    rows = [f"- sample_id: s{i}\n  prompt: question {i}\n  assertions: [{{type: contains, value: ok}}]\n" for i in range(8)]
    samples.write_text("samples:\n" + "".join("  " + r.replace("\n  ", "\n    ") for r in rows), encoding="utf-8")
    calls = count()

    def respond(request):  # the treatment passes more often; repeats differ
        n = next(calls)
        good = request.json["model"] == "gpt-4o" or n % 3 == 0
        return text_reply("ok" if good else "no")

    with ModelServer.for_openai(respond) as fake:
        env = {"PYTHONPATH": str(ROOT), "NO_COLOR": "1", "PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake.url}
        run = tmp_path / "run"
        made = run_omk(
            "eval", str(samples), "--target", "openai:gpt-4o-mini", "--target", "openai:gpt-4o", "--no-judge", "--repeat", "2", "--out", str(run), "--quiet",
            cwd=tmp_path, base=env, drop=(), columns=None, timeout=120,
        )  # fmt: skip
        assert made.returncode in (0, 1), made.stdout + made.stderr
    proc = run_omk("power", str(run), "--json", cwd=tmp_path, base=env, drop=(), columns=None, timeout=60)
    assert proc.returncode == 0, proc.stderr
    (figures,) = json.loads(proc.stdout)
    assert figures["control"] is not None
    assert figures["treatment"] != figures["control"]
    assert figures["samples"] == 8
    assert figures["repeats"] == 2
    assert figures["run_to_run_sd"] is not None
