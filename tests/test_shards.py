"""Shards (`omk eval --shard I/N`) and `omk merge`: the split is stable, disjoint and complete and
keeps a sample's repeats and variants together; a merge refuses shards that do not belong
together; N shards merged give the per-sample results, scores and verdict of one unsharded run
(the commands docs/ci.md runs in CI, run here on the bundled demo agent)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from omk.cli.main import main
from omk.core.errors import ConfigError
from omk.engine.shards import ShardSpec, shard_of, take_shard
from omk.samples.model import Sample

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


def test_the_plan_fingerprint_never_holds_the_plan_as_one_text():
    # every shard fingerprints the whole plan: at 100,000 samples its text is hundreds of MB
    import tracemalloc

    from omk.engine.shards import fingerprint, plan_fingerprint

    samples = [Sample(sample_id=f"c{i}", prompt="p", raw={"sample_id": f"c{i}", "prompt": "x" * 1000}) for i in range(10_000)]
    choices = {"target": ["replay:r.jsonl"], "seed": 1}
    tracemalloc.start()
    try:
        found = plan_fingerprint(samples, choices)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, f"{peak / 1e6:.1f} MB held for a plan of {len(samples) * 1000 / 1e6:.0f} MB"
    assert found == fingerprint({"samples": [[s.sample_id, s.raw] for s in samples], "choices": choices})  # the same digest as before


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
    assert not (ids[1] & ids[2])
    assert not (ids[1] & ids[3])
    assert not (ids[2] & ids[3])
    for i in (1, 2, 3):  # every repeat of a sample is in its shard
        assert sorted(r[1] for r in _results(in_tmp / "shards" / str(i))) == sorted([0, 1] * len(ids[i]))
    report = json.loads((merged / "report.json").read_text())
    summary = json.loads((whole / "report.json").read_text())["summary"]
    for key in ("total", "passed", "failed", "errored", "gate_passed", "scores", "repeat"):
        assert report["summary"][key] == summary[key]
    assert report["shard"]["merged"] == [1, 2, 3]
    assert report["shard"]["partial"] is False
    assert (merged / "results.jsonl").is_file()
    assert (merged / "summary.md").is_file()
    assert (merged / "junit.xml").is_file()
    assert (merged / "report.html").is_file()
    assert report["repeats"] is not None
    shard_run = json.loads((in_tmp / "shards" / "2" / "run.json").read_text())["shard"]
    assert shard_run["index"] == 2
    assert shard_run["count"] == 3
    assert shard_run["plan"] == report["shard"]["plan"]
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
        assert "\n" not in err
        assert "Traceback" not in err
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
    assert "部分合并：3 个分片中的 2 个，缺少 2：报告只涵盖已合并的分片" in said.err
    assert "部分合并" in said.out
    assert "partial merge" not in said.err + said.out
    assert "**部分合并：3 个分片中的 2 个，缺少 2**" in (in_tmp / "mz" / "summary.md").read_text()


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


# --- the judge's block and its check against people, merged -------------------------------------


def _judged_suite(tmp: Path, n: int) -> Path:
    """Samples with a rubric and people's labels (`gold:`), and the recorded outputs `grade G`."""
    import yaml

    grades = [1 + i % 5 for i in range(n)]
    samples = [
        {"sample_id": f"s{i:02d}", "prompt": f"question {i}", "rubric": "answers well", "gold": {"score": g, "pass": g >= 4, "rater": "ana"}}
        for i, g in enumerate(grades)
    ]
    (tmp / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    lines = [json.dumps({"sample_id": f"s{i:02d}", "output": f"grade {g}"}) for i, g in enumerate(grades)]
    (tmp / "outputs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp / "eval-samples.yaml"


def _two_judges(req):
    """Judge `a` scores the grade the output states; judge `b` agrees on some samples and not on others."""
    from judge_support import score_json

    from omk.testing.openai_chat import text_reply

    text = next(m["content"] for m in req.json["messages"] if m["role"] == "user")
    grade = int(text.split("grade ")[1][0])
    number = int(text.split("question ")[1].split()[0].strip(".,"))
    if req.json["model"] == "b" and number % 3 == 0:
        grade = 6 - grade
    return text_reply(score_json(grade))


def test_a_merged_judge_block_and_gold_check_are_over_every_shard(in_tmp):
    from omk.records.document import read_document
    from omk.testing import ModelServer

    samples = str(_judged_suite(in_tmp, 24))
    with ModelServer.for_openai(_two_judges) as fake:
        run = ["--target", f"replay:{in_tmp / 'outputs.jsonl'}", "--judge", f"openai:a@{fake.url},openai:b@{fake.url}"]
        for i in (1, 2, 3):
            assert _eval(in_tmp, samples, *run, "--shard", f"{i}/3", "--out", f"s{i}") in (0, 1)
        assert _eval(in_tmp, samples, *run, "--out", "whole") in (0, 1)
    assert main(["merge", "s1", "s2", "s3", "--out", "merged", "--quiet"]) in (0, 1)
    whole, merged, first = (read_document(in_tmp / d) for d in ("whole", "merged", "s1"))
    # an ensemble's agreement is across samples: each shard's covers its own samples only
    assert first.data["judge"]["agreement"]["sample_count"] < 24
    assert merged.data["judge"] == whole.data["judge"]
    assert merged.data["judge"]["agreement"]["sample_count"] == 24
    # the judge against people's labels: every shard's samples, as one run checks them
    assert first.gold is not None
    assert first.gold.labelled < 24
    assert merged.gold is not None
    assert whole.gold is not None
    assert merged.gold.labelled == 24
    assert merged.gold.to_json() == whole.gold.to_json()


def test_shards_with_other_judges_are_refused(in_tmp, capsys):
    samples = str(_judged_suite(in_tmp, 12))
    with ModelServerForJudges() as url:
        base = ["--target", f"replay:{in_tmp / 'outputs.jsonl'}"]
        assert _eval(in_tmp, samples, *base, "--judge", f"openai:a@{url}", "--shard", "1/2", "--out", "a1") in (0, 1)
        assert _eval(in_tmp, samples, *base, "--judge", f"openai:a@{url}", "--shard", "2/2", "--out", "a2") in (0, 1)
        assert _eval(in_tmp, samples, *base, "--judge", f"openai:b@{url}", "--shard", "2/2", "--out", "b2") in (0, 1)
        assert _eval(in_tmp, samples, *base, "--judge", f"openai:a@{url}", "--judge-repeat", "2", "--shard", "2/2", "--out", "r2") in (0, 1)
        assert _eval(in_tmp, samples, *base, "--judge", f"openai:a@{url}", "--no-debias-length", "--shard", "2/2", "--out", "d2") in (0, 1)
    capsys.readouterr()

    def refused(*dirs: str) -> str:
        assert main(["merge", *dirs, "--out", "m"]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err
        assert "Traceback" not in err
        return err

    assert "another plan" in refused("a1", "b2")  # another judge: another plan's fingerprint
    assert "other judge settings" in refused("a1", "r2")  # the same judge asked twice per item
    assert "other judge settings" in refused("a1", "d2")  # the same judge, another prompt
    assert not (in_tmp / "m" / "report.json").exists()
    assert main(["merge", "a1", "a2", "--out", "m", "--quiet"]) in (0, 1)


class ModelServerForJudges:
    """A loopback judge answering every item with the grade its output states."""

    def __enter__(self) -> str:
        from omk.testing import ModelServer

        self.server = ModelServer.for_openai(_two_judges)
        return self.server.__enter__().url

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)


# --- a merge streams its results ---------------------------------------------------------------


def test_a_merge_holds_a_few_results_at_a_time_whatever_their_number(in_tmp, monkeypatch):
    """Every result the merge reads (from the shards, then back from the merged results file for
    each format) is a `SampleResult` read from its text (`SampleResult.decode`); at most a few of them are alive at once,
    not the 600 of the run, so a merge of 100,000 results fits in memory as one run does."""
    import gc

    from omk.records.result import SampleResult

    n = 600
    lines = [json.dumps({"sample_id": f"c{i:04d}", "prompt": f"p {i}", "assertions": [{"type": "contains", "value": "ok"}]}) for i in range(n)]
    (in_tmp / "eval-samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    outputs = [json.dumps({"sample_id": f"c{i:04d}", "output": "ok" if i % 4 else "no"}) for i in range(n)]
    (in_tmp / "outputs.jsonl").write_text("\n".join(outputs) + "\n", encoding="utf-8")
    for i in (1, 2, 3):
        assert _eval(in_tmp, "eval-samples.jsonl", "--target", "replay:outputs.jsonl", "--shard", f"{i}/3", "--out", f"s{i}") == 1
    reads, alive = [0], [0]
    original = SampleResult.decode.__func__  # type: ignore[attr-defined]

    def counted(cls, *args, **kwargs):
        reads[0] += 1
        if reads[0] % 20 == 0:
            gc.collect()
            alive[0] = max(alive[0], sum(1 for o in gc.get_objects() if type(o) is SampleResult))
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(SampleResult, "decode", classmethod(counted))
    assert main(["merge", "s1", "s2", "s3", "--out", "merged", "--format", "md,junit,html", "--quiet"]) == 1
    assert reads[0] >= 2 * n  # read from the shards, and again for the formats
    assert alive[0] <= 10, f"{alive[0]} results held at once in a merge of {n}"
    assert json.loads((in_tmp / "merged" / "report.json").read_text())["summary"]["total"] == n


def test_an_empty_shard_still_merges(in_tmp):
    # more shards than samples (docs/ci.md): some shards hold none, and their folders merge all the same
    samples = [{"sample_id": f"c{i}", "prompt": f"p {i}", "assertions": [{"type": "contains", "value": "ok"}]} for i in range(3)]
    (in_tmp / "eval-samples.json").write_text(json.dumps({"samples": samples}), encoding="utf-8")
    (in_tmp / "outputs.jsonl").write_text("".join(json.dumps({"sample_id": f"c{i}", "output": "ok"}) + "\n" for i in range(3)))
    sizes = []
    for i in range(1, 6):
        _eval(in_tmp, "eval-samples.json", "--target", "replay:outputs.jsonl", "--shard", f"{i}/5", "--out", f"s{i}")
        sizes.append(json.loads((in_tmp / f"s{i}" / "report.json").read_text())["summary"]["total"])
    assert 0 in sizes
    assert sum(sizes) == 3
    assert main(["merge", *(f"s{i}" for i in range(1, 6)), "--out", "merged", "--format", "md,junit,html", "--quiet"]) == 0
    assert [r[0] for r in _results(in_tmp / "merged")] == ["c0", "c1", "c2"]


PAIRWISE_JUDGE = """
import json, sys
prompt = json.loads(sys.stdin.readline())["prompt"]
first, second = prompt.split("## Answer of assistant A")[1].split("## Answer of assistant B")
good = ["GOOD" in first, "GOOD" in second]
preference = 0 if good[0] == good[1] else 1 if good[0] else 2
print(json.dumps({"output": json.dumps({"reason": "GOOD wins" if preference else "alike", "preference": preference})}))
"""


def test_the_pairwise_judges_verdicts_of_every_shard_are_merged(in_tmp):
    import sys

    samples = [{"sample_id": f"s{i}", "prompt": f"question {i}", "assertions": [{"type": "contains", "value": "plain"}]} for i in range(10)]
    (in_tmp / "eval-samples.json").write_text(json.dumps({"samples": samples}), encoding="utf-8")
    for name, good in (("x", ()), ("y", (0, 2, 3, 6, 9))):
        lines = [json.dumps({"sample_id": f"s{i}", "output": f"plain {'GOOD' if i in good else i}"}) for i in range(10)]
        (in_tmp / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (in_tmp / "judge.py").write_text(PAIRWISE_JUDGE, encoding="utf-8")
    run = ["eval-samples.json", "--target", "replay:x.jsonl", "--target", "replay:y.jsonl", "--judge", f"cmd:{sys.executable} judge.py", "--seed", "3"]
    for i in (1, 2, 3):
        assert _eval(in_tmp, *run, "--shard", f"{i}/3", "--out", f"s{i}") in (0, 1)
    assert _eval(in_tmp, *run, "--out", "whole") in (0, 1)
    assert main(["merge", "s1", "s2", "s3", "--out", "merged", "--format", "md,html", "--quiet"]) in (0, 1)

    def pairwise(folder: str) -> dict:
        return json.loads((in_tmp / folder / "report.json").read_text())["experiment"]["pairwise"]

    (first,) = pairwise("s1")["pairs"]
    assert len(first["verdicts"]) < 10  # each shard judged its own samples only
    assert pairwise("merged") == pairwise("whole")
    (pair,) = pairwise("merged")["pairs"]
    assert [v["sample_id"] for v in pair["verdicts"]] == [f"s{i}" for i in range(10)]
    assert pair["summary"]["b_better"] == 5
    assert pair["win_rate"][0]["decisive"] == 5
    assert "GOOD wins" in (in_tmp / "merged" / "report.html").read_text()


def test_shards_whose_target_settings_differ_are_refused(in_tmp, monkeypatch, capsys):
    # the same target spec, another system prompt in omk.yaml: the plan's fingerprint is the same, the runs are not
    from omk.testing import ModelServer
    from omk.testing.openai_chat import text_reply

    for name in ("OPENAI_BASE_URL", "OMK_TARGET", "OMK_JUDGE"):
        monkeypatch.delenv(name, raising=False)
    samples = [{"sample_id": f"c{i}", "prompt": f"p {i}", "assertions": [{"type": "contains", "value": "ok"}]} for i in range(6)]
    (in_tmp / "eval-samples.json").write_text(json.dumps({"samples": samples}), encoding="utf-8")
    with ModelServer.for_openai(lambda req: text_reply("ok")) as fake:
        for folder, system in (("a1", "Be brief."), ("a2", "Be brief."), ("b2", "Be verbose.")):
            (in_tmp / "omk.yaml").write_text(f"target: openai:m\nsystem: {system}\nopenai:\n  base_url: {fake.url}\n", encoding="utf-8")
            shard = "1/2" if folder == "a1" else "2/2"
            assert _eval(in_tmp, "eval-samples.json", "--shard", shard, "--out", folder) == 0
    capsys.readouterr()
    assert main(["merge", "a1", "b2", "--out", "m"]) == 2
    err = capsys.readouterr().err.strip()
    assert "b2: this shard ran with other target settings than a1" in err
    assert "\n" not in err
    assert main(["merge", "a1", "a2", "--out", "m", "--quiet"]) == 0


def test_more_merge_refusals(in_tmp, capsys):
    for i in (1, 2):
        assert _eval(in_tmp, PLAIN, "--shard", f"{i}/2", "--out", f"p{i}") == 0
    assert _eval(in_tmp, EXPERIMENT, "--seed", "1", "--filter", "en-*", "--shard", "2/2", "--out", "e2") == 0
    assert _eval(in_tmp, PLAIN, "--shard", "2/2", "--out", "stopped") == 0
    (in_tmp / "stopped" / "report.json").unlink()  # a shard stopped before its report: the job was cancelled
    capsys.readouterr()

    def refused(*args: str) -> str:
        assert main(["merge", *args]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err
        assert "Traceback" not in err
        return err

    assert "an experiment and a plain run cannot be merged" in refused("p1", "e2", "--out", "m")
    assert "--out is one of the shards" in refused("p1", "p2", "--out", "p2")
    assert "stopped/report.json: no such report" in refused("p1", "stopped", "--out", "m")
    assert main(["merge", "p1", "p2", "--out", "m", "--quiet"]) == 0


@pytest.mark.parametrize("text", ["1/1000000000000", "1/10001"])
def test_a_split_into_more_shards_than_omk_allows_is_refused(text):
    with pytest.raises(ConfigError, match="at most 10000 shards"):
        ShardSpec.parse(text)
    assert ShardSpec.parse("10000/10000").count == 10000


def test_a_shard_report_claiming_a_huge_count_is_one_line_not_a_list_of_every_number(in_tmp, capsys):
    """A hostile shard's report.json says it is one of 10**15 shards: read as it is, the merge
    would build every missing number and run out of memory."""
    assert _eval(in_tmp, PLAIN, "--shard", "1/3", "--out", "a1") == 0
    for field, value in (("count", 10**15), ("index", 0), ("count", 0)):
        forged = in_tmp / f"forged-{field}-{value}"
        shutil.copytree(in_tmp / "a1", forged)
        data = json.loads((in_tmp / "a1" / "report.json").read_text())
        data["shard"][field] = value
        (forged / "report.json").write_text(json.dumps(data))
        capsys.readouterr()
        assert main(["merge", str(forged), "--out", "m", "--partial"]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "Traceback" not in err and f"shard.{field}" in err, err


def test_many_missing_shards_are_named_in_ranges():
    from omk.records.shard import number_ranges

    assert number_ranges([2, 3]) == "2, 3"
    assert number_ranges([1, 3, 4, 5, 9]) == "1, 3–5, 9"
    assert number_ranges(iter(range(2, 10_001)), shown=3) == "2–10000"
    assert number_ranges([n for n in range(1, 60) if n % 2], shown=3) == "1, 3, 5 and 27 more"
