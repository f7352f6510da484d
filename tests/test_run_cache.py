"""The SQLite response cache: what its key covers, what it stores, and what it never stores."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3

from helpers import make_spec

from omk.records import MockStats, ToolCall, Trace
from omk.runner.sample_run import RunConfig, run_sample
from omk.samples.model import Sample
from omk.store.cache import ResponseCache, cache_key, open_cache
from omk.targets.base import TargetError, TargetResult

IDENTITY = {"kind": "fake", "model": "m-1", "params": {"temperature": 0}, "system": "be brief"}


def full_trace() -> Trace:
    return Trace(
        turns=3,
        tool_calls=[
            ToolCall(tool="search", input={"q": "x"}, output="found", mocked=True, mock_key="search"),
            ToolCall(tool="rm", input={"path": "/"}, output="denied", mocked=False, is_error=True),
        ],
        cost_usd=0.0123,
        latency_ms=850.0,
        tokens={"input": 120, "output": 45},
        mock_stats=MockStats(hits=1, misses=1, per_mock={"search": 1}),
    )


class CountingTarget:
    spec = "fake:counting"

    def __init__(self, fail_first: int = 0, identity: dict | None = IDENTITY):
        self.calls = 0
        self.fail_first = fail_first
        self.identity = identity

    async def run(self, sample: Sample, prompt: str) -> TargetResult:
        self.calls += 1
        if self.calls <= self.fail_first:
            raise TargetError("HTTP 401: no", retryable=False)
        return TargetResult(output=f"answer {self.calls}", trace=full_trace())

    def describe(self) -> dict:
        return {"kind": "fake"}

    def cache_identity(self) -> dict | None:
        return self.identity

    async def close(self) -> None:
        return None


def sample(tmp_path, **changes) -> Sample:
    base = Sample(
        sample_id="s1",
        prompt="hello",
        tools=[{"name": "search", "description": "find", "parameters": {"type": "object"}}],
        mocks=[{"tool": "lookup", "return_file": "fixtures/order.json"}],
        assertions=[make_spec("contains", value="answer")],
        base_dir=tmp_path,
    )
    return dataclasses.replace(base, **changes)


def test_the_key_covers_everything_that_decides_the_output(tmp_path):
    (tmp_path / "fixtures").mkdir()
    fixture = tmp_path / "fixtures" / "order.json"
    fixture.write_text('{"status": "shipped"}', encoding="utf-8")
    s = sample(tmp_path)
    key = cache_key(IDENTITY, s, "hello")
    assert key == cache_key(dict(IDENTITY), sample(tmp_path), "hello")  # deterministic
    variants = [
        cache_key({**IDENTITY, "model": "m-2"}, s, "hello"),
        cache_key({**IDENTITY, "system": "be long"}, s, "hello"),
        cache_key({**IDENTITY, "params": {"temperature": 1}}, s, "hello"),
        cache_key(IDENTITY, s, "hello!"),
        cache_key(IDENTITY, sample(tmp_path, tools=[]), "hello"),
        cache_key(IDENTITY, sample(tmp_path, mocks=[{"tool": "lookup", "return": "x"}]), "hello"),
        cache_key(IDENTITY, sample(tmp_path, mocks_strict=True), "hello"),
        cache_key(IDENTITY, sample(tmp_path, sample_id="s2"), "hello"),
        cache_key(IDENTITY, s, "hello", repeat=1),
    ]
    assert key not in variants
    assert len(set(variants)) == len(variants)
    fixture.write_text('{"status": "lost"}', encoding="utf-8")  # the mock now returns something else
    assert cache_key(IDENTITY, s, "hello") != key


def test_stored_trace_comes_back_whole(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", TargetResult(output="out", trace=full_trace()), "fake")
    hit = cache.get("k")
    assert hit is not None
    assert hit.output == "out"
    assert hit.trace.to_json() == full_trace().to_json()
    assert cache.get("other") is None


def test_a_row_keeps_its_numbers_and_rows_of_earlier_versions_still_read(tmp_path):
    """Rows are msgspec's compact JSON; a NaN in a tool call's input is kept as Python's `json`
    writes it (msgspec would write null), and a row as earlier versions wrote it reads back."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    odd = Trace(tool_calls=[ToolCall(tool="calc", input={"x": float("nan"), "y": 1e-05, "s": "é"})])
    cache.put("nan", TargetResult(output="out", trace=odd), "fake")
    cache.put("plain", TargetResult(output="out", trace=full_trace()), "fake")
    cache.close()
    rows = dict(sqlite3.connect(tmp_path / "c.sqlite").execute("SELECT key, trace FROM responses").fetchall())
    assert '"x": NaN' in rows["nan"]
    assert '"tool_calls":[{"tool":"search"' in rows["plain"]
    again = ResponseCache(tmp_path / "c.sqlite")
    back = again.get("nan")
    assert back is not None
    assert back.trace.tool_calls[0].input["y"] == 1e-05
    assert back.trace.tool_calls[0].input["s"] == "é"
    x = back.trace.tool_calls[0].input["x"]
    assert x != x  # still NaN, not None
    earlier = json.dumps(full_trace().to_json(), ensure_ascii=False)  # how rows were written before
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        db.execute(
            "INSERT OR REPLACE INTO responses (key, target_kind, output, trace, created_at, mac) VALUES (?, ?, ?, ?, 0, ?)",
            ("old", "fake", "out", earlier, again._mac("responses", "old", "out", earlier)),
        )
    old = again.get("old")
    assert old is not None
    assert old.trace.to_json() == full_trace().to_json()


def test_second_run_calls_nothing_and_reports_the_cached_trace(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    target = CountingTarget()
    cfg = RunConfig(cache=cache)
    first = asyncio.run(run_sample(sample(tmp_path), target, cfg))
    second = asyncio.run(run_sample(sample(tmp_path), target, cfg))
    assert target.calls == 1
    assert first.cached is False
    assert first.attempts == 1
    assert second.cached is True
    assert second.attempts == 0
    assert second.to_json()["cached"] is True
    assert second.output == first.output == "answer 1"
    assert second.trace.to_json() == first.trace.to_json()
    assert len(second.trace.tool_calls) == 2
    assert second.trace.cost_usd == 0.0123
    assert second.passed == first.passed is True


def test_repeats_are_cached_apart(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    target = CountingTarget()
    cfg = RunConfig(cache=cache)
    outs = [asyncio.run(run_sample(sample(tmp_path), target, cfg, repeat=r)).output for r in (0, 1, 0, 1)]
    assert outs == ["answer 1", "answer 2", "answer 1", "answer 2"]
    assert target.calls == 2


def test_errors_are_never_cached(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    target = CountingTarget(fail_first=1)
    cfg = RunConfig(cache=cache)
    first = asyncio.run(run_sample(sample(tmp_path), target, cfg))
    second = asyncio.run(run_sample(sample(tmp_path), target, cfg))
    assert first.status == "error"
    assert second.status == "ok"
    assert second.cached is False
    assert target.calls == 2
    cache.close()  # stores are handed to the cache's own thread: wait for them before counting
    rows = sqlite3.connect(tmp_path / "c.sqlite").execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    assert rows == 1


def test_no_identity_means_no_caching(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    target = CountingTarget(identity=None)
    cfg = RunConfig(cache=cache)
    for _ in range(2):
        assert asyncio.run(run_sample(sample(tmp_path), target, cfg)).cached is False
    assert target.calls == 2


def test_the_identity_is_hashed_never_stored(tmp_path):
    path = tmp_path / "c.sqlite"
    marker = "identity-marker-7f3a9c"
    target = CountingTarget(identity={**IDENTITY, "base_url": f"http://{marker}"})
    cache = ResponseCache(path)
    asyncio.run(run_sample(sample(tmp_path), target, RunConfig(cache=cache)))
    cache.close()
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("c.sqlite*"))
    assert b"answer 1" in blob  # the output is there...
    assert marker.encode() not in blob  # ...the identity is not


def test_an_unusable_cache_file_is_skipped_with_a_warning(tmp_path, capsys):
    bad = tmp_path / "cache.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    assert open_cache(bad) is None
    assert "running without the response cache" in capsys.readouterr().err


def test_a_home_relative_return_file_is_part_of_the_key(tmp_path, monkeypatch):
    """`~/…` is read from the home folder by the sandbox, so its content must key the cache."""
    monkeypatch.setenv("HOME", str(tmp_path))
    fixture = tmp_path / "order.json"
    fixture.write_text('{"status": "shipped"}', encoding="utf-8")
    s = sample(tmp_path / "elsewhere", mocks=[{"tool": "lookup", "return_file": "~/order.json"}])
    key = cache_key(IDENTITY, s, "hello")
    fixture.write_text('{"status": "lost"}', encoding="utf-8")
    assert cache_key(IDENTITY, s, "hello") != key
