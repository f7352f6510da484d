"""`omk doctor`'s advice on small sets: how large a regression the set can see, samples graded by
a single check, a layer no sample checks, a capability with one sample. Advice does not weigh on
the health score."""

from __future__ import annotations

import json

from cli_support import run_omk
from scipy.stats import binomtest

from omk.doctor import examine, verdict
from omk.doctor.advice import min_flips, samples_needed
from omk.samples.model import AssertionSpec, Sample


def spec(kind: str, **kw) -> AssertionSpec:
    return AssertionSpec.of(type=kind, raw={"type": kind, **kw}, children=[])


def sample(sid: str, checks: int = 2, **kw) -> Sample:
    kw.setdefault("assertions", [spec("contains", value=f"x{i}") for i in range(checks)])
    return Sample(sample_id=sid, prompt=f"Explain {sid}", **kw)


def advice(samples) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for d in examine(samples, [])["diagnostics"]:
        if d["severity"] == "advice":
            out.setdefault(d["kind"], []).append(d)
    return out


def test_the_fewest_flips_is_the_exact_sign_test_of_scipy():
    k = min_flips()
    assert binomtest(k, k, 0.5).pvalue < 0.05 <= binomtest(k - 1, k - 1, 0.5).pvalue
    assert k == 6
    assert samples_needed() == 60
    assert binomtest(min_flips(0.01), min_flips(0.01), 0.5).pvalue < 0.01 <= binomtest(min_flips(0.01) - 1, min_flips(0.01) - 1, 0.5).pvalue


def test_a_small_set_is_told_the_smallest_regression_it_can_see():
    found = advice([sample(f"s{i}") for i in range(12)])["small_set"]
    assert found[0]["message"] == (
        "12 samples: a regression is told from noise only when 6 of them (50% of the set) flip the same way; "
        "seeing a 10% regression takes about 60 samples"
    )
    assert found[0]["detail"]["smallest_regression"] == 0.5
    assert "no regression can be told from noise" in advice([sample("a")])["small_set"][0]["message"]
    assert "small_set" not in advice([sample(f"s{i}") for i in range(60)])


def test_single_checks_empty_layers_and_lone_capabilities():
    samples = [
        sample("one", checks=1, capability=("refunds",)),
        sample("rubric", checks=1, rubric="Says the refund window is 30 days", capability=("tone",)),
        sample("two", checks=2, capability=("tone",)),
    ]
    found = advice(samples)
    assert [d["sample_id"] for d in found["single_check"]] == ["one"]
    assert "scores 1 or 5" in found["single_check"][0]["message"]
    assert [d["detail"]["layer"] for d in found["layer_without_checks"]] == ["behavior"]
    assert [d["sample_id"] for d in found["capability_single"]] == ["one"]
    assert "'refunds' has one sample" in found["capability_single"][0]["message"]


def test_advice_does_not_lower_the_health_or_the_verdict():
    result = examine([sample("one", checks=1, capability=("refunds",))], [])
    assert result["totals"]["advice"] >= 4
    assert result["health"] == 100
    assert verdict(result, strict=True)
    assert result["totals"]["flagged"] == 0
    assert result["recommendations"]


def test_omk_doctor_gives_the_advice_on_the_starter_set(tmp_path):
    run = lambda *a: run_omk(*a, cwd=tmp_path, drop=(), columns=200, timeout=120)  # noqa: E731
    assert run("init", "evals").returncode == 0
    proc = run("doctor", "evals/eval-samples.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[advice] small_set — 1" in proc.stdout
    assert "1 sample: no regression can be told from noise" in proc.stdout
    assert "✓ no sample-quality issues found" in proc.stdout
    kinds = {d["kind"] for d in json.loads(run("doctor", "evals/eval-samples.yaml", "--json").stdout)["diagnostics"]}
    assert {"small_set", "capability_single"} <= kinds
