"""Shards (`omk eval --shard I/N`) and `omk merge`: the split is stable, disjoint and complete and
keeps a sample's repeats and variants together; a merge refuses shards that do not belong
together; N shards merged give the per-sample results, scores and verdict of one unsharded run
(the commands docs/ci.md runs in CI, run here on the bundled demo agent)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from omk.cli.main import main
from omk.engine.shards import ShardSpec, shard_of, take_shard
from omk.errors import ConfigError
from omk.model import Sample

ROOT = Path(__file__).resolve().parents[1]
PLAIN = str(ROOT / "samples" / "eval-samples.yaml")
EXPERIMENT = str(ROOT / "samples" / "experiment" / "eval-samples.yaml")


def _samples(n: int) -> list[Sample]:
    return [Sample(sample_id=f"case-{i:04d}", prompt=f"prompt {i}", raw={"sample_id": f"case-{i:04d}"}) for i in range(n)]


def test_the_split_is_a_hash_of_the_id_alone():
    # fixed values: a change of the hash would split CI jobs differently from one omk to the next
    assert [shard_of(f"case-{i:04d}", 4) for i in range(8)] == [4, 2, 3, 1, 1, 4, 1, 1]
    assert [shard_of(s, 5) for s in ("alpha", "beta", "gamma", "delta")] == [5, 1, 3, 5]
    samples = _samples(200)
    shuffled = random.Random(3).sample(samples, len(samples))
    for index in range(1, 5):
        spec = ShardSpec(index, 4)
        a = take_shard(samples, spec, {"seed": 1})
        b = take_shard(shuffled, spec, {"seed": 1})
        assert {s.sample_id for s in a.samples} == {s.sample_id for s in b.samples}  # whatever the file order
        assert a.positions == sorted(a.positions)


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_the_shards_are_disjoint_and_complete(count):
    samples = _samples(300)
    parts = [take_shard(samples, ShardSpec(i, count), {}) for i in range(1, count + 1)]
    ids = [s.sample_id for part in parts for s in part.samples]
    assert sorted(ids) == sorted(s.sample_id for s in samples)  # complete, and no sample twice
    assert len({p.info.plan for p in parts}) == 1  # one plan, one fingerprint
    places = sorted(pos for part in parts for pos in part.positions)
    assert places == list(range(len(samples)))
    if count > 1:
        assert all(part.samples for part in parts)  # 300 samples fill every shard


def test_the_plan_fingerprint_covers_samples_and_choices():
    samples = _samples(20)
    base = take_shard(samples, ShardSpec(1, 2), {"seed": 1}).info.plan
    assert take_shard(samples, ShardSpec(1, 2), {"seed": 2}).info.plan != base
    assert take_shard(samples[:-1], ShardSpec(1, 2), {"seed": 1}).info.plan != base
    edited = [*samples[:-1], Sample(sample_id="case-0019", prompt="x", raw={"sample_id": "case-0019", "prompt": "x"})]
    assert take_shard(edited, ShardSpec(1, 2), {"seed": 1}).info.plan != base


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_is_refused(text):
    with pytest.raises(ConfigError, match="--shard"):
        ShardSpec.parse(text)


def _eval(tmp: Path, *args: str) -> int:
    return main(["eval", *args, "--no-cache", "--quiet"])


def _results(folder: Path) -> list[tuple]:
    data = json.loads((folder / "report.json").read_text())
    return [
        (r["sample_id"], r["repeat"], r["status"], r["passed"], r["scores"], [a["passed"] for a in r["assertions"]])
        for r in data["results"]
    ]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_plain_shards_merged_equal_one_run(in_tmp, capsys):
    # the commands of docs/ci.md: N shards, each its own folder, then one merge
    for i in (1, 2, 3):
        assert _eval(in_tmp, PLAIN, "--repeat", "2", "--shard", f"{i}/3", "--out", f"shards/{i}") == 0
    assert _eval(in_tmp, PLAIN, "--repeat", "2", "--out", "whole") == 0
    assert main(["merge", "shards/1", "shards/2", "shards/3", "--out", "merged", "--format", "md,junit,html"]) == 0
    merged, whole = in_tmp / "merged", in_tmp / "whole"
    assert _results(merged) == _results(whole)  # same results, scores and order as one run
    ids = {i: {r[0] for r in _results(in_tmp / "shards" / str(i))} for i in (1, 2, 3)}
    assert not (ids[1] & ids[2]) and not (ids[1] & ids[3]) and not (ids[2] & ids[3])
    for i in (1, 2, 3):  # every repeat of a sample is in its shard
        assert sorted(r[1] for r in _results(in_tmp / "shards" / str(i))) == sorted([0, 1] * len(ids[i]))
    report = json.loads((merged / "report.json").read_text())
    summary = json.loads((whole / "report.json").read_text())["summary"]
    for key in ("total", "passed", "failed", "errored", "gate_passed", "scores", "repeat"):
        assert report["summary"][key] == summary[key]
    assert report["shard"]["merged"] == [1, 2, 3] and report["shard"]["partial"] is False
    assert (merged / "results.jsonl").is_file() and (merged / "summary.md").is_file() and (merged / "junit.xml").is_file()
    assert (merged / "report.html").is_file() and report["repeats"] is not None
    shard_run = json.loads((in_tmp / "shards" / "2" / "run.json").read_text())["shard"]
    assert shard_run["index"] == 2 and shard_run["count"] == 3 and shard_run["plan"] == report["shard"]["plan"]
    # the other commands take a merged folder like any run folder
    capsys.readouterr()
    assert main(["diff", "whole", "merged", "--fail-on-regression"]) == 0
    assert "0 samples changed" in capsys.readouterr().out
    assert main(["report", "merged", "--format", "md", "--out", "again"]) == 0
    assert "merged: 3 of 3 shards" in (in_tmp / "again" / "summary.md").read_text()
    assert main(["doctor", PLAIN, "--report", "merged", "--json"]) in (0, 1)


def _timeless(value):
    """A block without what measures wall time (latency, and the verdict's lines that quote it):
    the same work timed twice differs there, and only there."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if "latency" not in k and k != "lines"}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def test_experiment_shards_merged_equal_one_run(in_tmp, capsys):
    for i in (1, 2):
        assert _eval(in_tmp, EXPERIMENT, "--seed", "7", "--shard", f"{i}/2", "--out", f"shards/{i}") == 0
    assert _eval(in_tmp, EXPERIMENT, "--seed", "7", "--out", "whole") == 0
    assert main(["merge", "shards/1", "shards/2", "--out", "merged", "--require", "progress", "--quiet"]) == 0
    merged, whole = (json.loads((in_tmp / d / "report.json").read_text())["experiment"] for d in ("merged", "whole"))
    for key in ("verdict", "comparisons", "variants", "control", "settings"):
        assert _timeless(merged[key]) == _timeless(whole[key]), key
    assert merged["verdict"]["lines"][1] == whole["verdict"]["lines"][1]  # PROGRESS · … Δ=+1.50 CI=[…]
    assert merged["seed"] == whole["seed"] == 7
    for name in ("baseline", "support-tone"):
        assert _results(in_tmp / "merged" / "variants" / name) == _results(in_tmp / "whole" / "variants" / name)
        per_shard = [{r[0] for r in _results(in_tmp / "shards" / str(i) / "variants" / name)} for i in (1, 2)]
        control = [{r[0] for r in _results(in_tmp / "shards" / str(i) / "variants" / "baseline")} for i in (1, 2)]
        assert per_shard == control  # every variant of a sample in the same shard: the pairs stay whole
    capsys.readouterr()
    assert main(["verdict", "merged", "--require", "progress"]) == 0
    assert "PROGRESS" in capsys.readouterr().out


def test_a_sharded_experiment_without_a_seed_takes_one_from_the_plan(in_tmp):
    for i in (1, 2):
        assert _eval(in_tmp, EXPERIMENT, "--shard", f"{i}/2", "--out", f"s{i}", "--filter", "en-*") == 0
    seeds = {json.loads((in_tmp / f"s{i}" / "experiment.json").read_text())["seed"] for i in (1, 2)}
    assert len(seeds) == 1
    assert main(["merge", "s1", "s2", "--out", "m", "--quiet"]) == 0


def test_merge_refusals(in_tmp, capsys):
    run = ["--out"]
    for i in (1, 2, 3):
        assert _eval(in_tmp, PLAIN, "--shard", f"{i}/3", *run, f"a{i}") == 0
    assert _eval(in_tmp, PLAIN, "--shard", "2/3", "--threshold", "3", "--out", "other2") == 0
    assert _eval(in_tmp, PLAIN, "--shard", "2/4", "--out", "four2") == 0
    assert _eval(in_tmp, PLAIN, "--out", "plain") == 0
    capsys.readouterr()

    def refused(*dirs: str, partial: bool = False) -> str:
        assert main(["merge", *dirs, "--out", "m", *(["--partial"] if partial else [])]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "Traceback" not in err
        return err

    assert "another plan" in refused("a1", "other2", "a3")
    assert "another split" in refused("a1", "four2")
    assert "given twice" in refused("a1", "a2", "a2", "a3")
    assert refused("a1", "a3") == "shard 2 of 3 missing; give every shard, or --partial to merge only these"
    assert "shards 2, 3 of 3 missing" in refused("a1")
    assert "not a shard" in refused("a1", "plain")
    assert main(["merge", "a1", "a3", "--out", "m", "--partial", "--format", "md"]) in (0, 1)
    assert "partial merge: 2 of 3 shards, missing 2" in capsys.readouterr().err
    report = json.loads((in_tmp / "m" / "report.json").read_text())
    assert report["shard"] == {"count": 3, "plan": report["shard"]["plan"], "merged": [1, 3], "missing": [2], "partial": True}
    assert report["warnings"][0].startswith("partial merge: 2 of 3 shards, missing 2")
    assert "partial merge" in (in_tmp / "m" / "summary.md").read_text()
    assert main(["merge", "a1", "a3", "--out", "mz", "--partial", "--format", "md", "--lang", "zh"]) in (0, 1)
    said = capsys.readouterr()
    assert "部分合并：3 个分片中的 2 个，缺少 2：报告只涵盖已合并的分片" in said.err and "部分合并" in said.out
    assert "partial merge" not in said.err + said.out and "**部分合并：3 个分片中的 2 个，缺少 2**" in (in_tmp / "mz" / "summary.md").read_text()


def test_the_shard_cannot_change_on_resume(in_tmp, capsys):
    assert _eval(in_tmp, PLAIN, "--shard", "1/2", "--out", "s1") == 0
    (in_tmp / "s1" / "report.json").unlink()
    capsys.readouterr()
    assert main(["eval", "--resume", "s1", "--shard", "2/2", "--quiet"]) == 2
    assert "--shard" in capsys.readouterr().err
    assert json.loads((in_tmp / "s1" / "run.json").read_text())["cli"]["shard"] == "1/2"  # what a resume runs again
    for i in (1, 2):
        assert _eval(in_tmp, EXPERIMENT, "--seed", "1", "--filter", "en-*", "--shard", f"{i}/2", "--out", f"e{i}") == 0
    capsys.readouterr()
    assert main(["eval", "--resume", "e1", "--shard", "2/2", "--quiet", "--target", "cmd:python ../agents/support_agent.py"]) == 2
    assert "--shard" in capsys.readouterr().err
