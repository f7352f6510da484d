"""Experiments end to end: variants run interleaved on the same samples, the paired verdict, the
exit code under --require, `omk verdict`, `omk diff`, resume, and bad variant declarations."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from api_support import write_agent
from cli_support import run_omk

from omk.core.errors import ConfigError
from omk.engine import EvalOptions
from omk.engine.experiment import prepare_experiment
from omk.engine.variants import Variant, from_cli

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "samples" / "experiment"


def omk(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return run_omk(*args, cwd=cwd, env=env, columns=120)


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("exp") / "run"
    proc = omk("eval", str(EXPERIMENT / "eval-samples.yaml"), "--seed", "11", "--out", str(out), "--no-cache")
    return proc, out


def test_the_bundled_experiment_shows_progress_for_the_skill(bundled):
    proc, out = bundled
    assert proc.returncode == 0, proc.stderr
    assert "Verdict: PROGRESS" in proc.stdout
    assert "support-tone vs baseline" in proc.stdout
    assert "SHIP" in proc.stdout
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    block = report["experiment"]
    assert block["verdict"]["level"] == "PROGRESS"
    assert block["control"] == "baseline"
    assert block["seed"] == 11
    comparison = block["comparisons"][0]
    assert comparison["treatment"] == "support-tone"
    assert comparison["samples"] == 24
    assert comparison["composite"]["ci"]["low"] > 0  # the paired interval is above 0
    assert {v["name"]: v["passed"] for v in block["variants"]} == {"baseline": 5, "support-tone": 23}
    for name in ("baseline", "support-tone"):
        variant = json.loads((out / "variants" / name / "report.json").read_text(encoding="utf-8"))
        assert variant["summary"]["total"] == 24
        assert variant["summary"]["duration_ms"] > 0  # the run phase, shared by the interleaved variants
    # the skill folder's rules reached the agent only in the treatment
    tone = json.loads((out / "variants" / "support-tone" / "report.json").read_text(encoding="utf-8"))
    base = json.loads((out / "variants" / "baseline" / "report.json").read_text(encoding="utf-8"))
    assert tone["target"]["system"]["source"] == "skill"
    assert (base["target"].get("system") or {}).get("source") is None
    assert json.loads((out / "experiment.json").read_text(encoding="utf-8"))["seed"] == 11


def test_verdict_and_require_read_the_run_folder_again(bundled):
    _, out = bundled
    again = omk("verdict", str(out))
    assert again.returncode == 0
    assert again.stdout.splitlines()[0] == "Verdict: PROGRESS"
    assert omk("verdict", str(out), "--require", "progress").returncode == 0
    assert omk("verdict", str(out), "--require", "no-regress").returncode == 0
    data = json.loads(omk("verdict", str(out), "--json").stdout)
    assert data["verdict"]["level"] == "PROGRESS"
    not_one = omk("verdict", str(out / "variants" / "baseline"))
    assert not_one.returncode == 2
    assert "not an experiment" in not_one.stderr


def test_a_regression_fails_require(tmp_path: Path):
    skill = EXPERIMENT / "skills" / "support-tone"
    proc = omk(
        "eval", str(EXPERIMENT / "eval-samples.yaml"), "--control", f"tone={skill}", "--treatment", "baseline",
        "--require", "no-regress", "--seed", "3", "--out", str(tmp_path / "run"), "--no-cache",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Verdict: REGRESS" in proc.stdout
    assert "DO NOT SHIP" in proc.stdout
    assert "--require no-regress: NOT met" in proc.stderr
    again = omk("verdict", str(tmp_path / "run"))  # the run's own --require applies
    assert again.returncode == 1
    assert "--require no-regress: NOT met" in again.stderr
    assert omk("verdict", str(tmp_path / "run"), "--require", "progress").returncode == 1


def test_diff_lists_what_changed_sample_by_sample(bundled):
    _, out = bundled
    a, b = out / "variants" / "baseline", out / "variants" / "support-tone"
    better = omk("diff", str(a), str(b), "--fail-on-regression")
    assert better.returncode == 0, better.stderr
    assert "0 got worse, 18 better" in better.stdout
    assert "en-hours: fail to pass" in better.stdout
    worse = omk("diff", str(b), str(a), "--fail-on-regression")
    assert worse.returncode == 1
    assert "en-hours: pass to fail" in worse.stdout
    data = json.loads(omk("diff", str(a), str(b), "--json").stdout)
    assert data["counts"]["fail_to_pass"] == 18
    assert data["unchanged"] == 6


def test_the_schedule_is_sample_major_shuffled_per_sample_and_seeded(tmp_path: Path):
    (tmp_path / "eval-samples.yaml").write_text(
        "samples:\n" + "".join(f"  - {{ sample_id: s{i}, prompt: p{i} }}\n" for i in range(12)), encoding="utf-8"
    )
    target = write_agent(tmp_path)
    variants = [Variant("a", "control", baseline=True), Variant("b", system="be brief"), Variant("c", system="be long")]
    options = EvalOptions(samples=[str(tmp_path / "eval-samples.yaml")], target=target, repeat=2, out=str(tmp_path / "r"))
    one = prepare_experiment(options, variants, cwd=tmp_path, seed=5).schedule()
    assert [s.sample_id for _, s, _ in one] == [f"s{i}" for i in range(12) for _ in range(6)]  # sample-major
    for start in range(0, len(one), 3):  # each (sample, repeat) runs every variant back to back
        assert sorted(i for i, _, _ in one[start : start + 3]) == [0, 1, 2]
    orders = {tuple(i for i, _, _ in one[k : k + 3]) for k in range(0, len(one), 3)}
    assert len(orders) > 1  # shuffled, not fixed
    again = prepare_experiment(options, variants, cwd=tmp_path, seed=5).schedule()
    other = prepare_experiment(options, variants, cwd=tmp_path, seed=6).schedule()
    key = [(i, s.sample_id, r) for i, s, r in one]
    assert key == [(i, s.sample_id, r) for i, s, r in again]
    assert key != [(i, s.sample_id, r) for i, s, r in other]


def test_resume_runs_only_the_missing_jobs_of_each_variant(tmp_path: Path):
    target = write_agent(tmp_path)
    (tmp_path / "eval-samples.yaml").write_text(
        "samples:\n" + "".join(f"  - {{ sample_id: s{i}, prompt: p{i}, assertions: [{{type: contains, value: echo}}] }}\n" for i in range(4)),
        encoding="utf-8",
    )
    (tmp_path / "omk.yaml").write_text(
        f"target: {target!r}\nvariants:\n  - {{ name: plain, role: control, baseline: true }}\n"
        "  - { name: terse, role: treatment, system: Answer in five words. }\n",
        encoding="utf-8",
    )
    calls = tmp_path / "calls.log"
    out = tmp_path / "run"
    first = omk("eval", "eval-samples.yaml", "--out", str(out), "--no-cache", cwd=tmp_path, env={"OMK_TEST_CALLS": str(calls)})
    assert first.returncode == 0, first.stderr
    assert len(calls.read_text(encoding="utf-8").split()) == 8
    results = out / "variants" / "terse" / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines()
    results.write_text("\n".join(line for line in lines if '"s2"' not in line) + "\n", encoding="utf-8")
    calls.write_text("", encoding="utf-8")
    resumed = omk(
        "eval", "--resume", str(out), "--target", target, "--no-cache", "--require", "progress",
        cwd=tmp_path, env={"OMK_TEST_CALLS": str(calls)},
    )  # fmt: skip
    assert resumed.returncode == 1, resumed.stderr  # four ties are no progress: --require given on resume decides
    assert calls.read_text(encoding="utf-8").split() == ["s2"]
    block = json.loads((out / "report.json").read_text(encoding="utf-8"))["experiment"]
    assert [v["samples"] for v in block["variants"]] == [4, 4]
    assert block["require"]["policy"] == "progress"
    assert block["require"]["passed"] is False


def test_bad_variants_are_located_errors(tmp_path: Path):
    target = write_agent(tmp_path)
    (tmp_path / "eval-samples.yaml").write_text("samples:\n  - { sample_id: s, prompt: p }\n", encoding="utf-8")
    (tmp_path / "omk.yaml").write_text(
        f"target: {target!r}\nvariants:\n  - {{ name: a, role: boss }}\n  - {{ name: b, role: treatment, colour: red }}\n",
        encoding="utf-8",
    )
    proc = omk("eval", "eval-samples.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert any(line.startswith("omk.yaml:3: variants[0] role:") for line in lines), proc.stderr
    assert any(":4: variants[1] colour: unknown field" in line for line in lines), proc.stderr
    assert "Traceback" not in proc.stderr
    lone = omk("eval", "eval-samples.yaml", "--treatment", "baseline", "--target", target, cwd=tmp_path)
    assert lone.returncode == 2
    assert "--treatment needs a --control" in lone.stderr
    with pytest.raises(ConfigError, match="no such skill"):
        from_cli("baseline", ["nowhere"], tmp_path)
    with pytest.raises(ConfigError, match="must be unique"):
        from_cli("baseline", ["baseline"], tmp_path)
    with pytest.raises(ConfigError, match="exactly one control"):
        from omk.engine.variants import check_roles

        check_roles([Variant("a", "treatment"), Variant("b", "treatment")], "here")


def test_a_treatment_can_be_a_folder_of_skill_folders(tmp_path: Path):
    for name in ("one", "two"):
        (tmp_path / "library" / name).mkdir(parents=True)
        (tmp_path / "library" / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\n", encoding="utf-8")
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    control, treatment = from_cli("without=baseline", ["lib=library"], tmp_path)
    assert control.baseline
    assert (treatment.name, treatment.skill) == ("lib", str((tmp_path / "library").resolve()))
    with pytest.raises(ConfigError, match="no such skill"):  # a folder with no skill folder in it
        from_cli("baseline", ["empty"], tmp_path)


JUDGE = """
import json, os, sys
request = json.loads(sys.stdin.readline())
with open(os.environ["OMK_TEST_JUDGE_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps(request) + "\\n")
print(json.dumps({"reason": "fine", "score": 4}))
"""


def test_the_judge_is_blind_to_the_variant(tmp_path: Path):
    target = write_agent(tmp_path)
    judge = tmp_path / "judge.py"
    judge.write_text(JUDGE, encoding="utf-8")
    (tmp_path / "eval-samples.yaml").write_text(
        "samples:\n" + "".join(f"  - {{ sample_id: s{i}, prompt: question {i}, rubric: Answers the question. }}\n" for i in range(3)),
        encoding="utf-8",
    )
    log = tmp_path / "judge.log"
    proc = omk(
        "eval", "eval-samples.yaml", "--target", target, "--judge", f"cmd:{sys.executable} {judge}",
        "--control", "ARM-ALPHA=baseline", "--treatment", "ARM-BETA=system:You are ARM-BETA.", "--no-cache", "--out", "run",
        cwd=tmp_path, env={"OMK_TEST_JUDGE_LOG": str(log)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    requests = log.read_text(encoding="utf-8").splitlines()
    assert len(requests) == 6  # every answer of both variants was judged
    assert not any("ARM-ALPHA" in r or "ARM-BETA" in r for r in requests)
