"""Judges checked against people: α against the `krippendorff` package, κ against scikit-learn,
α's interval coverage by seeded simulation, the labels file's located errors, and `omk gold`
on a run folder."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from omk.cli.main import main
from omk.records.gold import GoldCheck
from omk.stats.agreement import alpha, alpha_interval, cohen_kappa
from omk.stats.verdict import Level, PairVerdict, untrusted_judge

krippendorff = pytest.importorskip("krippendorff")
np = pytest.importorskip("numpy")
metrics = pytest.importorskip("sklearn.metrics")


def _units(r: random.Random, n: int, coders: int) -> list[list[float]]:
    units = []
    for _ in range(n):
        base = r.randint(1, 5)
        m = r.randint(1, coders)
        units.append([float(min(5, max(1, base + r.choice([-1, 0, 0, 1])))) for _ in range(m)])
    return units


@pytest.mark.parametrize("level", ["interval", "ordinal"])
@pytest.mark.parametrize("seed", range(6))
def test_alpha_matches_krippendorff(level: str, seed: int) -> None:
    r = random.Random(seed)
    units = _units(r, 25, 4)
    matrix = np.full((4, len(units)), np.nan)
    for j, unit in enumerate(units):
        for i, v in enumerate(unit):
            matrix[i, j] = v
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    assert alpha(units, level) == pytest.approx(expected, abs=1e-9)  # type: ignore[arg-type]


@pytest.mark.parametrize("level", ["interval", "ordinal"])
@pytest.mark.parametrize("seed", range(3))
def test_alpha_interval_is_the_bootstrap_of_krippendorffs_alpha(level: str, seed: int) -> None:
    """The same resamples (the seeded draw of units with replacement), each one's α from the
    `krippendorff` package, and the expanded percentile interval as numpy computes quantiles."""
    from omk.stats.bootstrap import expanded_alpha

    units = _units(random.Random(100 + seed), 25, 4)
    found = alpha_interval(units, level, resamples=200, seed=seed)  # type: ignore[arg-type]
    units = [u for u in units if len(u) >= 2]  # a unit with one value pairs with nothing: left out first
    draw, alphas = random.Random(seed).choices, []
    for _ in range(200):
        picked = [units[i] for i in draw(range(len(units)), k=len(units))]
        matrix = np.full((4, len(picked)), np.nan)
        for j, unit in enumerate(picked):
            matrix[: len(unit), j] = unit
        alphas.append(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))
    cut = expanded_alpha(0.05, len(units))
    low, high = np.quantile(alphas, [cut / 2, 1 - cut / 2])
    assert found is not None
    assert (found.low, found.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))


def test_alpha_of_constant_data_is_none() -> None:
    assert alpha([[3, 3], [3, 3]]) is None
    assert alpha_interval([[3, 3], [3, 3]]) is None


@pytest.mark.parametrize("seed", range(5))
def test_kappa_matches_sklearn(seed: int) -> None:
    r = random.Random(seed)
    a = [r.random() < 0.6 for _ in range(40)]
    b = [x if r.random() < 0.75 else not x for x in a]
    assert cohen_kappa(a, b) == pytest.approx(metrics.cohen_kappa_score(a, b), abs=1e-12)


def test_alpha_interval_covers_the_true_alpha() -> None:
    """95% intervals over 1,000 seeded sets of 60 samples: 93–97% hold the population's α."""

    def draw(r: random.Random, n: int) -> list[list[float]]:
        out = []
        for _ in range(n):
            truth = r.gauss(3, 1)
            out.append([truth + r.gauss(0, 1.0), truth + r.gauss(0.2, 1.0)])
        return out

    r = random.Random(11)
    truth = alpha(draw(r, 200_000))
    assert truth is not None
    hits = 0
    for k in range(1000):
        ci = alpha_interval(draw(r, 60), resamples=300, seed=k)
        assert ci is not None
        hits += ci.low <= truth <= ci.high
    assert 930 <= hits <= 970


def test_progress_judged_by_a_flagged_judge_is_cautious() -> None:
    pair = PairVerdict("c", "t", Level.PROGRESS, "clean-win", "Δ=+0.5", "SHIP — …")
    changed = untrusted_judge(pair, ["openai:j: rubric α=0.41 < 0.667"])
    assert changed.level is Level.CAUTIOUS
    assert changed.reason == "judge-untrusted"
    assert "α=0.41" in changed.recommendation
    assert untrusted_judge(pair, []) is pair


# --- the command on a run folder ---------------------------------------------------------------


def _result(sid: str, rubric: float, a: float, b: float, gold: list[dict] | None = None) -> dict:
    def item(score: float, ma: float, mb: float) -> dict:
        return {"score": score, "reason": "", "judges": [{"judge": "m:a", "score": ma}, {"judge": "m:b", "score": mb}]}

    block = {
        "score": rubric,
        "rubric": item(rubric, a, b),
        "dimensions": {"tone": item(rubric, a, b)},
        "judges": [{"judge": "m:a", "score": a}, {"judge": "m:b", "score": b}],
    }
    out = {"sample_id": sid, "status": "ok", "prompt": f"p {sid}", "output": f"out {sid}", "judge": block, "scores": {"judge": rubric}}
    if gold:
        out["gold"] = gold
    return out


def _run(tmp_path: Path, people: list[float], judge_a: list[float], judge_b: list[float]) -> Path:
    results = []
    for i, (p, a, b) in enumerate(zip(people, judge_a, judge_b, strict=True)):
        gold = [{"score": p, "dimensions": {"tone": p}, "pass": p >= 3.5, "rater": "ana"}] if i % 2 == 0 else None
        results.append(_result(f"s{i}", round((a + b) / 2, 2), a, b, gold))
    report = {
        "format": "omk-report/1",
        "judge": {"models": ["m:a", "m:b"]},
        "summary": {"threshold": 3.5, "total": len(results)},
        "results": results,
    }
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.json").write_text(json.dumps(report), encoding="utf-8")
    return run


def test_gold_check_flags_the_member_people_disagree_with(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = random.Random(3)
    people = [float(r.randint(1, 5)) for _ in range(40)]
    good = [min(5.0, max(1.0, p + r.choice([-0.5, 0, 0, 0.5]))) for p in people]
    bad = [float(r.randint(1, 5)) for _ in people]
    run = _run(tmp_path, people, good, bad)
    labels = tmp_path / "labels.jsonl"
    lines = [json.dumps({"sample_id": f"s{i}", "rater": "bo", "score": p, "dimensions": {"tone": p}, "pass": p >= 3.5}) for i, p in enumerate(people)]
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["gold", "check", str(run), "--gold", str(labels), "--json"])
    check = GoldCheck.read(json.loads(capsys.readouterr().out), "out")
    assert check is not None
    assert code == 1  # the bad member is flagged
    by = {j.judge: j for j in check.judges}
    assert not by["m:a"].flagged
    assert by["m:b"].flagged
    assert by["m:a"].items[0].item == "rubric"
    assert by["m:a"].items[0].samples == 40
    assert {p.item for p in check.people} == {"rubric", "dimension tone"}  # ana and bo both labelled even samples
    assert by["m:a"].passes is not None
    assert by["m:a"].passes.kappa is not None
    assert main(["gold", "check", str(run), "--gold", str(labels)]) == 1
    text = capsys.readouterr().out
    assert "m:b ⚑" in text
    assert "< 0.667" in text
    assert main(["gold", "check", str(run), "--gold", str(labels), "--lang", "zh"]) == 1
    said = capsys.readouterr().out
    from english_lines import english_lines

    assert "评委对比人工标注" in said
    assert "偏差=" in said
    assert "都通过" in said
    assert english_lines(said, ["m:a", "m:b", "rubric", "tone", "dimension"]) == [], said


def test_gold_init_writes_one_empty_line_per_sample(tmp_path: Path) -> None:
    run = _run(tmp_path, [3.0, 4.0, 2.0], [3.0, 4.0, 2.0], [3.0, 4.0, 2.0])
    out = tmp_path / "labels.jsonl"
    assert main(["gold", "init", str(run), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["sample_id"] for r in rows] == ["s0", "s1", "s2"]
    assert rows[0]["score"] is None
    assert rows[0]["dimensions"] == {"tone": None}
    assert rows[0]["output"] == "out s0"
    assert main(["gold", "init", str(run), "--out", str(out)]) == 2  # never overwrites labels unasked


def test_gold_check_on_the_fresh_template_says_every_label_is_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The template `omk gold init` writes, checked before anyone filled it in: the file was
    given, so the error says its labels are all still empty and which fields to fill, never
    "give --gold FILE"."""
    report = {"format": "omk-report/1", "judge": {"models": ["m:a"]}, "summary": {"threshold": 3.5, "total": 2}, "results": [_result(f"s{i}", 3.0, 3.0, 3.0) for i in range(2)]}
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.json").write_text(json.dumps(report), encoding="utf-8")
    labels = tmp_path / "labels.jsonl"
    assert main(["gold", "init", str(run), "--out", str(labels)]) == 0
    capsys.readouterr()
    assert main(["gold", "check", str(run), "--gold", str(labels)]) == 2
    err = capsys.readouterr().err
    assert "give --gold FILE" not in err
    assert f"{labels}: every label is still empty" in err
    assert "score (1-5)" in err
    assert "rater" in err
    assert main(["gold", "check", str(run)]) == 2  # no file given at all: the old advice stands
    assert "give --gold FILE" in capsys.readouterr().err


def test_bad_labels_file_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, [3.0, 4.0], [3.0, 4.0], [3.0, 4.0])
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"sample_id": "s0", "score": 7}\n{"sample_id": "s1", "pass": "yes", "colour": 1}\nnot json\n', encoding="utf-8")
    assert main(["gold", "check", str(run), "--gold", str(labels)]) == 2
    err = capsys.readouterr().err
    assert f"{labels}:1: score: expected a score from 1 to 5, found 7" in err
    assert f"{labels}:2: pass: expected true or false" in err
    assert f'{labels}:2: colour: unknown field "colour"' in err
    assert f"{labels}:3: not valid JSON" in err


# --- omk eval with people's labels, end to end on the loopback judge ------------------------------


def _samples(tmp_path: Path, n: int, people: callable) -> Path:  # type: ignore[valid-type]
    import yaml

    grades = [3 + i % 3 for i in range(n)]
    samples = [
        {"sample_id": f"s{i}", "prompt": f"question {i}", "rubric": "answers well", "gold": {"score": people(g), "pass": people(g) >= 3.5, "rater": "ana"}}
        for i, g in enumerate(grades)
    ]
    (tmp_path / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    for name, bump in (("control", 0), ("treatment", 1)):
        lines = [json.dumps({"sample_id": f"s{i}", "output": f"grade {min(5, g + bump)}"}) for i, g in enumerate(grades)]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path / "eval-samples.yaml"


def _grading_judge(req):  # scores the grade the output states
    from judge_support import score_json

    from omk.testing.openai_chat import text_reply

    text = next(m["content"] for m in req.json["messages"] if m["role"] == "user")
    grade = int(text.split("grade ")[1][0])
    return text_reply(score_json(grade))


def test_eval_writes_the_gold_block_and_every_format_shows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from omk.records.document import read_document
    from omk.testing import ModelServer

    monkeypatch.chdir(tmp_path)
    samples = _samples(tmp_path, 12, lambda g: g)  # the people agree with the judge
    with ModelServer.for_openai(_grading_judge) as fake:
        code = main(["eval", str(samples), "--target", f"replay:{tmp_path / 'control.jsonl'}", "--judge", f"openai:j@{fake.url}",
                     "--out", str(tmp_path / "run"), "--format", "md,junit,html", "--no-cache"])  # fmt: skip
    assert code == 1  # the outputs graded 3 fail the 3.5 gate
    assert "Judge against people" in capsys.readouterr().out  # the terminal
    report = read_document(tmp_path / "run")
    assert report.gold is not None
    assert report.gold.labelled == 12
    (judge,) = report.gold.judges
    assert judge.items[0].alpha == 1.0
    assert not judge.flagged
    assert judge.passes is not None
    assert judge.passes.kappa == 1.0
    assert next(r for r in report.results if r.sample_id == "s0").gold == ({"score": 3, "pass": False, "rater": "ana"},)
    assert "Judge against people" in (tmp_path / "run" / "summary.md").read_text(encoding="utf-8")
    assert 'name="gold:openai:j@' in (tmp_path / "run" / "junit.xml").read_text(encoding="utf-8")
    assert '<section id="gold">' in (tmp_path / "run" / "report.html").read_text(encoding="utf-8")


def test_a_flagged_judge_turns_progress_into_cautious(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from omk.records.document import read_document
    from omk.testing import ModelServer

    monkeypatch.chdir(tmp_path)
    samples = _samples(tmp_path, 12, lambda g: 8 - g)  # the people rank the outputs the other way round
    with ModelServer.for_openai(_grading_judge) as fake:
        spec = f"openai:j@{fake.url}"
        code = main(["eval", str(samples), "--target", f"replay:{tmp_path / 'control.jsonl'}", "--target", f"replay:{tmp_path / 'treatment.jsonl'}",
                     "--judge", spec, "--out", str(tmp_path / "run"), "--no-cache", "--seed", "1", "--format", "md,junit"])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "Judge against people" in out
    assert "Verdict: CAUTIOUS" in out
    assert "Judge against people" in (tmp_path / "run" / "summary.md").read_text(encoding="utf-8")
    assert "gold:openai:j@" in (tmp_path / "run" / "junit.xml").read_text(encoding="utf-8")
    report = read_document(tmp_path / "run")
    assert report.gold is not None
    assert [j.judge for j in report.gold.flagged] == [spec]
    assert report.experiment is not None
    verdict = report.experiment.verdict
    assert verdict.level == "CAUTIOUS"
    assert "judge disagrees with people" in verdict.headline


def test_a_bad_gold_in_a_sample_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "eval-samples.yaml").write_text("samples:\n  - sample_id: a\n    prompt: hi\n    gold: {score: 9, pass: yes please}\n", encoding="utf-8")
    (tmp_path / "r.jsonl").write_text('{"sample_id": "a", "output": "x"}\n', encoding="utf-8")
    assert main(["eval", str(tmp_path / "eval-samples.yaml"), "--target", f"replay:{tmp_path / 'r.jsonl'}", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "eval-samples.yaml:4" in err
    assert "gold" in err


def test_a_labels_fifo_or_missing_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    run = _run(tmp_path, [3.0, 4.0], [3.0, 4.0], [3.0, 4.0])
    fifo = tmp_path / "labels.fifo"
    os.mkfifo(fifo)
    assert main(["gold", "check", str(run), "--gold", str(fifo)]) == 2  # returns at once: never opened for reading
    assert main(["gold", "check", str(run), "--gold", str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"{fifo}: cannot read" in err
    assert "none.jsonl: no such labels file" in err


# --- a large run is read one result at a time --------------------------------------------------


def _laid_out(run: Path, report: dict) -> None:
    """report.json in omk's own layout (each result on a line of its own), which omk reads lazily."""
    results = report.pop("results")
    head = "".join(f"  {json.dumps(k)}: {json.dumps(v)},\n" for k, v in report.items())
    rows = ",\n".join(f"    {json.dumps(r)}" for r in results)
    (run / "report.json").write_text("{\n" + head + '  "results": [\n' + rows + "\n  ]\n}\n", encoding="utf-8")


def test_gold_check_holds_a_bounded_number_of_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import gc
    import weakref

    import msgspec

    from omk.records import SampleResult
    from omk.records.rows import ResultRows

    class Tracked(SampleResult, gc=True, weakref=True):
        pass

    alive = {"now": 0, "most": 0, "made": 0}

    def gone() -> None:
        alive["now"] -= 1

    parse = ResultRows._parse

    def counted(self: ResultRows, i: int, text: str) -> SampleResult:
        r = parse(self, i, text)
        tracked = Tracked(**msgspec.structs.asdict(r))
        alive["now"] += 1
        alive["made"] += 1
        alive["most"] = max(alive["most"], alive["now"])
        weakref.finalize(tracked, gone)
        return tracked

    monkeypatch.setattr(ResultRows, "_parse", counted)
    r = random.Random(5)
    people = [float(r.randint(1, 5)) for _ in range(600)]
    run = _run(tmp_path, people, people, [min(5.0, p + 0.5) for p in people])
    _laid_out(run, json.loads((run / "report.json").read_text(encoding="utf-8")))
    gc.collect()
    assert main(["gold", "check", str(run), "--json"]) == 0
    check = json.loads(capsys.readouterr().out)
    assert check["labelled"] == 300  # ana labelled the even samples in their `gold:`
    assert alive["made"] >= 600 and alive["most"] <= 2, f"held {alive['most']} of 600 results at once"
    alive["most"] = 0
    assert main(["gold", "init", str(run), "--out", str(tmp_path / "labels.jsonl")]) == 0
    assert len((tmp_path / "labels.jsonl").read_text(encoding="utf-8").splitlines()) == 600
    assert alive["most"] <= 2
