"""The response cache: `.omk/cache.sqlite`, so an unchanged sample on rerun costs no call.

The key is a sha256 over everything that decides what the target produces (see `cache_key`);
the value is the output and the whole trace (tool calls, tokens, cost, latency), so assertions
on a cached result see exactly what they saw the first time. Only successful target calls are
stored. Keys are hashes and the target identity is never stored, so no secret lands here.
The judge keeps its parsed replies in the same table, under keys of its own (`judge:…`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omk.mock_defs import return_file_path
from omk.model import Sample
from omk.target_result import TargetResult
from omk.trace_io import TraceFormatError, parse_trace

KEY_VERSION = 1
DEFAULT_PATH = Path(".omk") / "cache.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    target_kind TEXT,
    output TEXT NOT NULL,
    trace TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""
# A conversation is one entry: every turn's output, trace and history messages, in order.
_CONVERSATIONS = """
CREATE TABLE IF NOT EXISTS conversations (
    key TEXT PRIMARY KEY,
    target_kind TEXT,
    turns TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


def _return_files(mocks: Sequence[dict[str, Any]], base_dir: Path) -> dict[str, str | None]:
    """The sha256 of each file a mock's `return_file` names: the files the mock sandbox reads,
    read as it reads them (a regular file, at most its size cap), so a key never reads more.
    A `return_file` key deeper inside a mock (`return: {return_file: …}`) is part of the value
    the mock returns, not a file, and is hashed as such with the mocks."""
    from omk.safe_files import MAX_MOCK_FILE_BYTES, read_regular_bytes

    found: dict[str, str | None] = {}
    for mock in mocks if isinstance(mocks, list | tuple) else ():
        name = mock.get("return_file") if isinstance(mock, dict) else None
        if isinstance(name, str) and name:
            try:
                found[name] = hashlib.sha256(read_regular_bytes(return_file_path(name, base_dir), MAX_MOCK_FILE_BYTES)).hexdigest()
            except (OSError, ValueError):  # UnsafeFile is an OSError: the sandbox answers with an error too
                found[name] = None
    return found


def cache_key(identity: dict[str, Any], sample: Sample, prompt: str, repeat: int = 0) -> str:
    """sha256 of the target identity (kind, model, params, system…), the composed prompt, the
    sample's tools, mocks, mocksStrict and the content of its `return_file` files, its cwd, its
    sample_id (two samples never share an entry) and the repeat index (so `--repeat 3` keeps
    three distinct answers)."""
    return _digest(_material(identity, sample, prompt, repeat))


def conversation_key(identity: dict[str, Any], sample: Sample, prompts: list[str], repeat: int = 0) -> str:
    """Like `cache_key`, over the whole conversation: every turn's composed prompt, in order. An
    edit to any turn (or to the mocks, tools, target…) makes it a new conversation."""
    return _digest({**_material(identity, sample, None, repeat), "turns": prompts})


def _material(identity: dict[str, Any], sample: Sample, prompt: str | None, repeat: int) -> dict[str, Any]:
    files = _return_files(sample.mocks, sample.base_dir)
    return {
        "v": KEY_VERSION,
        "target": identity,
        "sample_id": sample.sample_id,
        "repeat": repeat,
        "prompt": prompt,
        "system": sample.raw.get("system"),
        "cwd": sample.cwd,
        "tools": sample.tools,
        "mocks": sample.mocks,
        "mocks_strict": sample.mocks_strict,
        "return_files": files,
        **_prelude(sample),
    }


def _prelude(sample: Sample) -> dict[str, Any]:
    """Big Sky samples: history, variables and single step decide the output too. Left out when
    unset, so the keys of every other sample stay as they were."""
    if not (sample.history or sample.variables or sample.single_step):
        return {}
    return {"history": sample.history, "variables": sample.variables, "single_step": sample.single_step}


def _digest(material: dict[str, Any]) -> str:
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """A small SQLite table; each lookup or store is one indexed statement."""

    def __init__(self, path: Path = DEFAULT_PATH):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=10, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self._db.execute(_CONVERSATIONS)

    def get(self, key: str) -> TargetResult | None:
        """The stored result, or None on a miss (an unreadable entry or a locked file is a miss too)."""
        try:
            row = self._db.execute("SELECT output, trace FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            return TargetResult(output=row[0], trace=parse_trace(json.loads(row[1])))
        except (sqlite3.Error, ValueError, TraceFormatError):
            return None

    def put(self, key: str, result: TargetResult, target_kind: str | None = None) -> None:
        """Store a successful result. A cache that cannot be written never fails the sample."""
        if not isinstance(result.output, str):
            return
        try:
            trace = json.dumps(result.trace.to_json(), ensure_ascii=False)
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, target_kind, output, trace, created_at) VALUES (?, ?, ?, ?, ?)",
                (key, target_kind, result.output, trace, time.time()),
            )
        except (sqlite3.Error, TypeError, ValueError):
            return

    def get_turns(self, key: str) -> list[TargetResult] | None:
        """A stored conversation, one result per turn, or None on a miss."""
        try:
            row = self._db.execute("SELECT turns FROM conversations WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            return [
                TargetResult(output=t["output"], trace=parse_trace(t["trace"]), messages=list(t.get("messages") or []))
                for t in json.loads(row[0])
            ]
        except (sqlite3.Error, ValueError, TypeError, KeyError, TraceFormatError):
            return None

    def put_turns(self, key: str, results: list[TargetResult], target_kind: str | None = None) -> None:
        """Store a conversation whose every turn succeeded."""
        if not all(isinstance(r.output, str) for r in results):
            return
        try:
            turns = [{"output": r.output, "trace": r.trace.to_json(), "messages": r.messages} for r in results]
            self._db.execute(
                "INSERT OR REPLACE INTO conversations (key, target_kind, turns, created_at) VALUES (?, ?, ?, ?)",
                (key, target_kind, json.dumps(turns, ensure_ascii=False), time.time()),
            )
        except (sqlite3.Error, TypeError, ValueError):
            return

    def close(self) -> None:
        self._db.close()


def open_cache(path: Path | None = None) -> ResponseCache | None:
    """The cache under the current directory, or None (with a warning) if it cannot be opened."""
    import sys

    path = path or Path.cwd() / DEFAULT_PATH
    try:
        return ResponseCache(path)
    except (OSError, sqlite3.Error) as exc:
        print(f"warning: running without the response cache: {path}: {exc}", file=sys.stderr)
        return None
