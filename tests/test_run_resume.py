"""Reading a run folder back: run.json, results.jsonl with a torn tail, and the repeat figures."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

import msgspec
import pytest
from helpers import make_spec

from omk.core.errors import InputError
from omk.records import Trace
from omk.runner import resume as rs
from omk.runner.repeats import repeat_stats, repeats_of, spent_cost
from omk.runner.sample_run import RunConfig, run_jobs
from omk.samples.model import Sample
from omk.scoring.summary import summarize
from omk.targets.base import TargetResult


@dataclass(slots=True)
class Finished:
    results: dict[tuple[str, int], rs.RestoredResult] = field(default_factory=dict)
    dropped: int = 0  # lines that could not be used
    skipped: list[str] = field(default_factory=list)  # broken lines, named


def read_finished(path, samples, repeat: int) -> Finished:
    """Every result in `results.jsonl` by (sample_id, repeat), the last line winning."""
    done = Finished()
    for key, _, _, result in rs.scan_finished(path, samples, repeat, done):
        done.results[key] = result
    return done


class EchoTarget:
    spec = "fake:echo"

    def __init__(self, outputs: dict[tuple[str, int], str] | None = None):
        self.outputs = outputs or {}
        self.n = 0

    async def run(self, sample: Sample, prompt: str) -> TargetResult:
        self.n += 1
        return TargetResult(output=f"{sample.sample_id} says hi", trace=Trace(turns=1, cost_usd=0.5, latency_ms=10.0))

    def describe(self) -> dict:
        return {"kind": "fake"}

    def cache_identity(self) -> None:
        return None

    async def close(self) -> None:
        return None


def samples() -> list[Sample]:
    return [
        Sample(sample_id=f"s{i}", prompt="p", assertions=[make_spec("contains", value="hi"), make_spec("max_length", value=100)])
        for i in range(3)
    ]


def write_results(path, results) -> None:
    path.write_text("".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in results), encoding="utf-8")


def test_stored_results_restore_to_the_same_report_entries_and_summary(tmp_path):
    ss = samples()
    results = asyncio.run(run_jobs([(s, r) for s in ss for r in range(2)], EchoTarget(), RunConfig()))
    path = tmp_path / "results.jsonl"
    write_results(path, results)
    done = read_finished(path, {s.sample_id: s for s in ss}, repeat=2)
    assert done.dropped == 0
    assert len(done.results) == 6
    restored = [done.results[(s.sample_id, r)] for s in ss for r in range(2)]
    assert [r.to_json() for r in restored] == [r.to_json() for r in results]
    assert summarize(restored, 3.5, 1.0) == summarize(results, 3.5, 1.0)


def test_a_torn_last_line_is_dropped_and_cut_off(tmp_path):
    ss = samples()
    results = asyncio.run(run_jobs([(s, 0) for s in ss], EchoTarget(), RunConfig()))
    path = tmp_path / "results.jsonl"
    write_results(path, results[:2])
    whole = path.read_bytes()
    torn = json.dumps(results[2].to_json()).encode()[:57]
    path.write_bytes(whole + torn)
    done = read_finished(path, {s.sample_id: s for s in ss}, repeat=1)
    assert set(done.results) == {("s0", 0), ("s1", 0)}
    assert done.dropped == 1
    assert path.read_bytes() == whole  # the next append starts on a fresh line


def test_a_whole_but_unterminated_last_line_is_kept_and_terminated(tmp_path):
    ss = samples()
    results = asyncio.run(run_jobs([(s, 0) for s in ss], EchoTarget(), RunConfig()))
    path = tmp_path / "results.jsonl"
    write_results(path, results[:2])
    path.write_bytes(path.read_bytes() + json.dumps(results[2].to_json()).encode())
    done = read_finished(path, {s.sample_id: s for s in ss}, repeat=1)
    assert len(done.results) == 3
    assert path.read_bytes().endswith(b"}\n")
    assert len(path.read_text().splitlines()) == 3


def test_lines_for_other_samples_or_repeats_are_ignored_and_the_last_line_wins(tmp_path):
    ss = samples()
    results = asyncio.run(run_jobs([(s, r) for s in ss for r in range(2)], EchoTarget(), RunConfig()))
    path = tmp_path / "results.jsonl"
    later = results[0].to_json() | {"output": "second try"}
    path.write_text(
        "\n".join(json.dumps(r.to_json()) for r in results) + "\n\n" + json.dumps(later) + "\n[1, 2]\n",
        encoding="utf-8",
    )
    done = read_finished(path, {s.sample_id: s for s in ss[:2]}, repeat=1)
    assert set(done.results) == {("s0", 0), ("s1", 0)}
    assert done.results[("s0", 0)].output == "second try"
    assert done.dropped == 5  # s2 twice, repeat 1 of s0 and s1, and the list


def test_resume_keeps_the_recorded_run_and_refuses_to_change_it():
    manifest = {"cli": {"samples": ["a.yaml"], "target": "replay:r.jsonl", "concurrency": None, "repeat": 2}}
    args = {"command": "eval", "resume": "dir", "samples": [], "target": None, "concurrency": 8, "quiet": True}
    cli = rs.resume_cli(manifest["cli"], args)
    assert cli["target"] == "replay:r.jsonl"
    assert cli["repeat"] == 2
    assert cli["concurrency"] == 8
    with pytest.raises(InputError, match="drop --repeat"):
        rs.resume_cli(manifest["cli"], {**args, "repeat": 3})
    with pytest.raises(InputError, match="not the run's target"):
        rs.resume_cli(manifest["cli"], {**args, "target": "openai:x"})
    assert rs.resume_cli(manifest["cli"], {**args, "target": "replay:r.jsonl"})["target"] == "replay:r.jsonl"  # given again
    with pytest.raises(InputError, match="drop SAMPLES"):
        rs.resume_cli(manifest["cli"], {**args, "samples": ["b.yaml"]})


def test_a_folder_that_is_not_a_run_is_a_clear_input_error(tmp_path):
    with pytest.raises(InputError, match="no run.json"):
        rs.read_manifest(tmp_path)
    with pytest.raises(InputError, match="no such run folder"):
        rs.read_manifest(tmp_path / "missing")
    (tmp_path / "run.json").write_text("{oops", encoding="utf-8")
    with pytest.raises(InputError, match=r"run\.json:1: invalid JSON"):
        rs.read_manifest(tmp_path)


def test_repeat_figures_per_sample(tmp_path):
    ss = samples()[:2]
    results = asyncio.run(run_jobs([(s, r) for s in ss for r in range(3)], EchoTarget(), RunConfig()))
    # make s1 flaky: its second run failed one of two assertions, its third errored
    results[4] = msgspec.structs.replace(results[4], scores=msgspec.structs.replace(results[4].scores, composite=3.0), passed=False)
    results[5] = msgspec.structs.replace(results[5], status="error", passed=False)
    stats = repeat_stats(results)
    assert stats[0].to_json() == {
        "sample_id": "s0",
        "runs": 3,
        "errored": 0,
        "passed": 3,
        "pass_rate": 1.0,
        "composite": {"mean": 5.0, "stddev": 0.0, "min": 5.0, "max": 5.0},
        "pass_at_k": [1.0, 1.0, 1.0],
        "pass_hat_k": [1.0, 1.0, 1.0],
    }
    assert stats[1].passed == 1
    assert stats[1].pass_rate == 0.33
    assert stats[1].errored == 1  # an errored run fails
    assert stats[1].composite.to_json() == {"mean": 4.0, "stddev": 1.41, "min": 3.0, "max": 5.0}
    rep = repeats_of(stats, 3)
    assert (rep.n, rep.samples, rep.always_passed, rep.flaky, rep.never_passed) == (3, 2, 1, 1, 0)


def test_cached_results_cost_nothing_this_run():
    ss = samples()
    results = asyncio.run(run_jobs([(s, 0) for s in ss], EchoTarget(), RunConfig()))
    assert spent_cost(results) == 1.5
    results[0] = msgspec.structs.replace(results[0], cached=True)
    assert spent_cost(results) == 1.0
    assert results[0].trace.cost_usd == 0.5
    results = [msgspec.structs.replace(r, cached=True) for r in results]
    assert spent_cost(results) == 0.0
    results = [msgspec.structs.replace(r, trace=msgspec.structs.replace(r.trace, cost_usd=None)) for r in results]
    assert spent_cost(results) is None  # unknown, not zero
