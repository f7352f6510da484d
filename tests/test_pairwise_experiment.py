"""Two targets as an experiment with the pairwise judge, end to end with real subprocesses (replay
targets, a `cmd:` judge program): the verdicts with errored and skipped cases, the Python API
giving the same block as the command line, turning the judge on and off, resume, and names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from api_support import write_agent
from cli_support import run_omk

import omk as omk_api
from omk.core.errors import ConfigError
from omk.engine.variants import target_name, target_variants

SAMPLES = "".join(f"- sample_id: s{i}\n  prompt: question {i}\n  assertions: [{{type: contains, value: plain}}]\n" for i in range(1, 5))
X = ["plain one", "plain two", "plain three", "plain four"]
Y = ["plain GOOD", "plain two", None, "plain JUNK"]  # s3 missing: B errors there

JUDGE = """
import json, sys
prompt = json.loads(sys.stdin.readline())["prompt"]
first, second = prompt.split("## Answer of assistant A")[1].split("## Answer of assistant B")
if "JUNK" in prompt:
    print(json.dumps({"output": "no idea"}))  # not a verdict: the judge errs on this sample
    sys.exit(0)
good = ["GOOD" in first, "GOOD" in second]
preference = 0 if good[0] == good[1] else 1 if good[0] else 2
print(json.dumps({"output": json.dumps({"reason": "GOOD wins" if preference else "alike", "preference": preference})}))
"""


@pytest.fixture
def two_replays(tmp_path: Path) -> Path:
    (tmp_path / "eval-samples.yaml").write_text(SAMPLES, encoding="utf-8")
    for name, outputs in (("x", X), ("y", Y)):
        lines = [json.dumps({"sample_id": f"s{i}", "output": o}) for i, o in enumerate(outputs, start=1) if o is not None]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "judge.py").write_text(JUDGE, encoding="utf-8")
    return tmp_path


def omk(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_omk(*args, cwd=cwd, timeout=120)


def judge_spec(folder: Path | None = None) -> str:
    return f"cmd:{sys.executable} {folder / 'judge.py' if folder else 'judge.py'}"


def pairs_of(run: Path) -> list[dict]:
    return json.loads((run / "report.json").read_text(encoding="utf-8"))["experiment"]["pairwise"]["pairs"]


def test_every_verdict_with_errored_cases(two_replays):
    proc = omk(two_replays, "eval", "--target", "replay:x.jsonl", "--target", "replay:y.jsonl", "--judge", judge_spec(), "--out", "run", "--no-cache", "--seed", "4")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "errored samples (replay-y.jsonl 1): exit 1 whatever the verdict" in proc.stderr  # B missed s3
    (pair,) = pairs_of(two_replays / "run")
    found = [(v["sample_id"], v["status"], v["winner"], v["error"]) for v in pair["verdicts"]]
    assert found[:3] == [
        ("s1", "ok", "b", None),
        ("s2", "ok", "tie", None),
        ("s3", "error", None, "B (replay-y.jsonl) failed on this sample: no recorded response for 's3' in y.jsonl"),
    ]
    assert found[3][:3] == ("s4", "error", None)
    assert found[3][3].startswith("judge (A first): ")
    assert pair["summary"] == {"compared": 2, "a_better": 0, "b_better": 1, "ties": 1, "errored": 2, "skipped": 0}
    assert pair["win_rate"][0] | {"ci": None} == {
        "key": "pairwise", "b_better": 1, "a_better": 0, "ties": 1, "decisive": 1, "rate": 1.0, "ci": None, "p_value": 1.0, "tie_rate": 0.5
    }  # fmt: skip
    assert json.loads((two_replays / "run" / "experiment.json").read_text(encoding="utf-8"))["pairwise"] is True


def test_the_python_api_gives_the_same_block(two_replays):
    cli = omk(two_replays, "eval", "--target", "replay:x.jsonl", "--target", "replay:y.jsonl", "--judge", judge_spec(), "--out", "cli", "--no-cache", "--seed", "4")
    assert cli.returncode == 1, cli.stderr
    outcome = omk_api.run_experiment(
        [two_replays / "eval-samples.yaml"],
        control="target:replay:x.jsonl",
        treatments=["target:replay:y.jsonl"],
        judge=judge_spec(two_replays),
        cwd=two_replays,
        seed=4,
        cache=False,
    )
    assert outcome.out_dir is None  # in memory

    def same(pair: dict) -> dict:  # the API names the replay files and the judge by their absolute paths
        verdicts = [{**v, "error": (v["error"] or "").split(":")[0]} for v in pair["verdicts"]]
        return {**pair, "targets": [t["spec"] for t in pair["targets"]], "verdicts": verdicts, "reports": None}

    (api,) = outcome.block.to_json()["pairwise"]["pairs"]
    assert api["summary"]["b_better"] == 1
    assert same(api) == same(pairs_of(two_replays / "cli")[0])
    assert api["reports"] == [None, None]  # no run folders
    assert [c.treatment for c in outcome.analysis.comparisons] == ["replay-y.jsonl"]
    off = omk_api.run_experiment(
        [two_replays / "eval-samples.yaml"], control="target:replay:x.jsonl", treatments=["target:replay:y.jsonl"],
        judge=judge_spec(two_replays), cwd=two_replays, pairwise=False,
    )  # fmt: skip
    assert not off.block.pairs
    assert "pairwise" not in off.block.to_json()
    assert off.analysis.comparisons


def test_turning_the_pairwise_judge_on_and_off(two_replays):
    off = omk(two_replays, "eval", "--target", "replay:x.jsonl", "--target", "replay:y.jsonl", "--judge", judge_spec(), "--no-pairwise", "--out", "off")
    assert off.returncode == 1, off.stderr
    assert "pairwise" not in json.loads((two_replays / "off" / "report.json").read_text(encoding="utf-8"))["experiment"]
    agent = write_agent(two_replays)
    on = omk(
        two_replays, "eval", "--target", agent, "--control", "baseline", "--treatment", "terse=system:be terse",
        "--judge", judge_spec(), "--pairwise", "--out", "on",
    )  # fmt: skip
    assert on.returncode == 0, on.stdout + on.stderr
    (pair,) = pairs_of(two_replays / "on")
    assert (pair["control"], pair["treatment"]) == ("baseline", "terse")
    assert [v["winner"] for v in pair["verdicts"]] == ["tie"] * 4  # the echo agent ignores the system prompt
    default = omk(two_replays, "eval", "--target", agent, "--control", "baseline", "--treatment", "system:be terse", "--judge", judge_spec(), "--out", "default")
    assert default.returncode == 0, default.stderr
    assert "pairwise" not in json.loads((two_replays / "default" / "report.json").read_text(encoding="utf-8"))["experiment"]
    alone = omk(two_replays, "eval", "--target", "replay:x.jsonl", "--pairwise")
    assert alone.returncode == 2
    assert "--pairwise compares the variants of an experiment" in alone.stderr


def test_resume_finishes_the_variants_and_judges_again(two_replays):
    args = ("eval", "--target", "replay:x.jsonl", "--target", "replay:y.jsonl", "--judge", judge_spec(), "--out", "run", "--seed", "2")
    assert omk(two_replays, *args).returncode == 1
    before = pairs_of(two_replays / "run")
    results = two_replays / "run" / "variants" / "replay-y.jsonl" / "results.jsonl"
    results.write_text(results.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")  # as if cut short
    resumed = omk(two_replays, "eval", "--resume", "run", "--judge", judge_spec())  # a command judge runs again only when given again
    assert resumed.returncode == 1, resumed.stdout + resumed.stderr
    assert len(results.read_text(encoding="utf-8").splitlines()) == 4
    assert pairs_of(two_replays / "run") == before


def test_variant_names_come_from_the_specs_and_stay_unique_and_safe():
    assert target_name("cmd:python agents/v2.py") == "cmd-python-v2.py"
    assert target_name("replay:samples/bigsky/responses-v0.jsonl") == "replay-responses-v0.jsonl"
    assert target_name("openai:gpt-4o") == "openai-gpt-4o"
    assert target_name("replay:回答/旧版.jsonl") == "replay-旧版.jsonl"
    assert target_name("cmd:../..") == "cmd"
    assert target_name("cmd:'unterminated") == "cmd-unterminated"
    assert len(target_name("cmd:" + "x" * 200)) == 64
    names = [v.name for v in target_variants(["replay:r.jsonl", "replay:r.jsonl", "replay:./r.jsonl"])]
    assert names == ["replay-r.jsonl", "replay-r.jsonl-2", "replay-r.jsonl-3"]
    assert [v.role for v in target_variants(["openai:a", "openai:b"])] == ["control", "treatment"]
    with pytest.raises(ConfigError, match="variant name '..'"):
        omk_api.run_experiment([{"sample_id": "a", "prompt": "p"}], control="..=baseline", treatments=["system:x"], target="replay:x.jsonl")
