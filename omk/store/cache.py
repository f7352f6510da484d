"""The response cache: `.omk/cache.sqlite`, so an unchanged sample on rerun costs no call.

The key is a sha256 over everything that decides what the target produces (see `cache_key`;
the target's part is its `CacheIdentity`: model, endpoint, program, environment, settings);
the value is the output and the whole trace (tool calls, tokens, cost, latency), so assertions
on a cached result see exactly what they saw the first time. Only successful target calls are
stored. Keys are hashes and the target identity is never stored, so no secret lands here.
Every row is signed with a key kept outside the project, so a cache file from elsewhere (one
committed in a pull request, say) is never taken as an answer.
The judge keeps its parsed replies in the same table, under keys of its own (`judge:…`).

Rows are JSON written with `msgspec.json.encode` and read with `msgspec.json.decode` (a cached
rerun reads one row per sample). A row holding a NaN or an infinity is written as Python's `json`
writes it (`NaN`, `Infinity`), never as `null` (msgspec's choice), so it reads back as it was; such
rows, and those written by earlier versions, are read with `json` when msgspec refuses them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from omk.domain.mock_defs import return_file_path
from omk.domain.target_identity import CacheIdentity
from omk.domain.target_result import TargetResult
from omk.domain.trace_io import TraceFormatError, parse_trace
from omk.io.textsafe import for_terminal
from omk.samples.model import Sample

if TYPE_CHECKING:
    from concurrent.futures import Future

T = TypeVar("T")
# 2: the target's identity holds its endpoint, program, environment and settings
# (omk.domain.target_identity); an answer stored under a key without them is never taken again.
KEY_VERSION = 2
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
    from omk.io.safe_files import MAX_MOCK_FILE_BYTES, read_regular_bytes

    found: dict[str, str | None] = {}
    for mock in mocks if isinstance(mocks, list | tuple) else ():
        name = mock.get("return_file") if isinstance(mock, dict) else None
        if isinstance(name, str) and name:
            try:
                found[name] = hashlib.sha256(read_regular_bytes(return_file_path(name, base_dir), MAX_MOCK_FILE_BYTES)).hexdigest()
            except (OSError, ValueError):  # UnsafeFile is an OSError: the sandbox answers with an error too
                found[name] = None
    return found


Identity = CacheIdentity | dict[str, Any]  # a dict: a target object of a program's own (the Python API)


def identity_kind(identity: Identity) -> str | None:
    """The target kind an identity names (stored beside an entry, never the identity itself)."""
    kind = identity.kind if isinstance(identity, CacheIdentity) else identity.get("kind")
    return kind if isinstance(kind, str) else None


def cache_key(identity: Identity, sample: Sample, prompt: str, repeat: int = 0) -> str:
    """sha256 of the target identity (model, endpoint, program, environment, settings: see
    omk.domain.target_identity), the composed prompt, the sample's tools, mocks, mocksStrict and the
    content of its `return_file` files, of its `workspace:` folder and `files_available`, its
    cwd, its sample_id (two samples never share an entry) and the repeat index (so `--repeat 3`
    keeps three distinct answers)."""
    return _digest(_material(identity, sample, prompt, repeat))


def conversation_key(identity: Identity, sample: Sample, prompts: list[str], repeat: int = 0) -> str:
    """Like `cache_key`, over the whole conversation: every turn's composed prompt, in order. An
    edit to any turn (or to the mocks, tools, target…) makes it a new conversation."""
    return _digest({**_material(identity, sample, None, repeat), "turns": prompts})


def _material(identity: Identity, sample: Sample, prompt: str | None, repeat: int) -> dict[str, Any]:
    files = _return_files(sample.mocks, sample.base_dir)
    return {
        "v": KEY_VERSION,
        "target": identity.material() if isinstance(identity, CacheIdentity) else identity,
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
        **_folders(sample),
    }


def _folders(sample: Sample) -> dict[str, Any]:
    """The content of what an agent target copies into the folder it works in: the sample's
    `workspace:` folder and its `environment.files_available` entries (each regular file's name
    and digest; symlinks are not followed). Left out when the sample names neither."""
    available = [str(f).strip() for f in (sample.environment or {}).get("files_available") or [] if str(f).strip()]
    if not sample.workspace and not available:
        return {}
    from omk.domain.workspace import workspace_source
    from omk.io.safe_files import sample_path

    source = workspace_source(sample)
    found: dict[str, Any] = {"workspace": _tree(source) if source is not None else None}
    if available:
        base = sample_path(sample.cwd, sample.base_dir) if sample.cwd else sample.base_dir
        found["files_available"] = {name: _tree(base / name) for name in available}
    return found


def _tree(path: Path) -> Any:
    """A regular file's digest, or a folder's files (name, size, digest); None for anything else."""
    import os

    from omk.domain.workspace import snapshot
    from omk.io.safe_files import special_reason

    real = Path(os.path.realpath(path))
    if special_reason(real) is not None:
        return None
    try:
        if real.is_dir():
            return sorted(snapshot(real).items())
        with real.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:  # missing, or a name the system refuses (too long): the target says so when it copies
        return None


def _prelude(sample: Sample) -> dict[str, Any]:
    """Big Sky samples: history, variables and single step decide the output too. Left out when
    unset, so the keys of every other sample stay as they were."""
    if not (sample.history or sample.variables or sample.single_step):
        return {}
    return {"history": sample.history, "variables": sample.variables, "single_step": sample.single_step}


def _digest(material: dict[str, Any]) -> str:
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


BUSY_TIMEOUT_S = 0.25  # a cache another process holds is given up on after this, never waited out
KEY_ENV = "OMK_CACHE_KEY"


def _dumps(value: Any) -> str:
    """A row's JSON text (TypeError or ValueError: a value JSON cannot hold; the row is not stored)."""
    if _finite(value):
        return msgspec.json.encode(value).decode("utf-8")
    return json.dumps(value, ensure_ascii=False)


def _finite(value: Any) -> bool:
    """No NaN or infinity anywhere in `value` (dicts, lists and tuples looked into)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_finite(v) for v in value)
    return True


def _loads(text: str) -> Any:
    """A row read back: msgspec for the rows it wrote, `json` for those it refuses (`NaN`)."""
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        return json.loads(text)


class ResponseCache:
    """A small SQLite table; each lookup or store is one indexed statement. Stores run on a thread
    of the cache's own and are not waited for (a write can wait on another process's lock);
    lookups run where they are asked, on a second connection (readers never wait for a writer in
    WAL mode). Every row carries an HMAC (`mac`) over its key and value under a secret kept
    outside the project (`cache_secret`); a row without a valid one (a cache written elsewhere, or
    edited) is a miss. A cache that stops working (locked by another process, a full disk) is
    turned off for the rest of the run with one warning."""

    def __init__(self, path: Path = DEFAULT_PATH, secret: bytes | None = None):
        from concurrent.futures import ThreadPoolExecutor

        self.path = path
        self.secret = secret if secret is not None else cache_secret()
        self.off = False
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="omk-cache")
        try:
            self._db = self._pool.submit(self._connect).result()
            self._reader: sqlite3.Connection | None = None  # lookups: opened on the first one
            self._reading = threading.Lock()
            self._stores: dict[str, Future[None]] = {}  # stores not yet done, by key
        except BaseException:
            self._pool.shutdown(wait=False)
            raise

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            for schema, table in ((_SCHEMA, "responses"), (_CONVERSATIONS, "conversations")):
                db.execute(schema)
                if "mac" not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN mac TEXT")  # a cache from before rows were signed
        except BaseException:
            db.close()
            raise
        return db

    def _mac(self, *parts: str) -> str:
        import hmac

        return hmac.new(self.secret, "\x00".join(parts).encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()

    def _signed(self, mac: object, *parts: str) -> bool:
        import hmac

        return isinstance(mac, str) and hmac.compare_digest(mac, self._mac(*parts))

    def _run(self, job: Callable[[], T], fallback: T) -> T:
        """`job` on the cache's thread, waited for; `fallback` once the cache is off or fails."""
        if self.off:
            return fallback
        try:
            return self._pool.submit(self._guarded, job, fallback).result()
        except RuntimeError:  # closed
            return fallback

    def _guarded(self, job: Callable[[], T], fallback: T) -> T:
        if self.off:
            return fallback
        try:
            return job()
        except sqlite3.Error as exc:
            self._turn_off(exc)
            return fallback

    def _turn_off(self, exc: BaseException) -> None:
        import sys

        if not self.off:
            self.off = True
            print(for_terminal(f"warning: the response cache {self.path} cannot be used ({exc}); the run goes on without it"), file=sys.stderr)

    def _now(self, job: Callable[[], T], fallback: T) -> T:
        """A lookup, on the calling thread with the cache's reading connection. A lookup is one
        short indexed read, which no writer blocks (the file is in WAL mode), so handing it to the
        cache's thread would cost more than it saves; a lookup that fails turns the cache off as
        a store does."""
        if self.off:
            return fallback
        try:
            with self._reading:
                return job()
        except sqlite3.Error as exc:
            self._turn_off(exc)
            return fallback

    def _lookup(self, statement: str, key: str) -> Any:
        """One row by key from the reading connection (held under `_reading` by `_now`)."""
        if self._reader is None:
            self._reader = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        return self._reader.execute(statement, (key,)).fetchone()

    def _read(self, key: str) -> TargetResult | None:
        row = self._lookup("SELECT output, trace, mac FROM responses WHERE key = ?", key)
        if row is None or not self._signed(row[2], "responses", key, row[0], row[1]):
            return None
        try:
            return TargetResult(output=row[0], trace=parse_trace(_loads(row[1])))
        except (ValueError, TypeError, TraceFormatError):
            return None

    def _has(self, key: str) -> bool:
        row = self._lookup("SELECT output, trace, mac FROM responses WHERE key = ?", key)
        return row is not None and self._signed(row[2], "responses", key, row[0], row[1])

    def _write(self, key: str, result: TargetResult, target_kind: str | None) -> None:
        if not isinstance(result.output, str):
            return
        try:
            trace = _dumps(result.trace.to_json())
        except (TypeError, ValueError):
            return
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, target_kind, output, trace, created_at, mac) VALUES (?, ?, ?, ?, ?, ?)",
            (key, target_kind, result.output, trace, time.time(), self._mac("responses", key, result.output, trace)),
        )

    def _read_turns(self, key: str) -> list[TargetResult] | None:
        row = self._lookup("SELECT turns, mac FROM conversations WHERE key = ?", key)
        if row is None or not self._signed(row[1], "conversations", key, row[0]):
            return None
        try:
            return [
                TargetResult(output=t["output"], trace=parse_trace(t["trace"]), messages=list(t.get("messages") or []))
                for t in _loads(row[0])
            ]
        except (ValueError, TypeError, KeyError, AttributeError, TraceFormatError):
            return None

    def _write_turns(self, key: str, results: list[TargetResult], target_kind: str | None) -> None:
        if not all(isinstance(r.output, str) for r in results):
            return
        try:
            turns = _dumps([{"output": r.output, "trace": r.trace.to_json(), "messages": r.messages} for r in results])
        except (TypeError, ValueError):
            return
        self._db.execute(
            "INSERT OR REPLACE INTO conversations (key, target_kind, turns, created_at, mac) VALUES (?, ?, ?, ?, ?)",
            (key, target_kind, turns, time.time(), self._mac("conversations", key, turns)),
        )

    # the run's calls: lookups, and stores handed to the cache's thread and not waited for
    async def fetch(self, key: str) -> TargetResult | None:
        self._settled(key)
        return self._now(lambda: self._read(key), None)

    def store(self, key: str, result: TargetResult, target_kind: str | None = None) -> None:
        self._submit(key, lambda: self._write(key, result, target_kind))

    async def fetch_turns(self, key: str) -> list[TargetResult] | None:
        self._settled(key)
        return self._now(lambda: self._read_turns(key), None)

    def store_turns(self, key: str, results: list[TargetResult], target_kind: str | None = None) -> None:
        self._submit(key, lambda: self._write_turns(key, results, target_kind))

    def _submit(self, key: str, job: Callable[[], None]) -> None:
        if not self.off:
            with contextlib.suppress(RuntimeError):  # closed
                future = self._pool.submit(self._guarded, job, None)
                self._stores[key] = future
                future.add_done_callback(lambda done: self._stores.pop(key, None) if self._stores.get(key) is done else None)

    def _settled(self, key: str) -> None:
        """Wait for a store of `key` still on the cache's thread: a lookup sees what was stored before it."""
        pending = self._stores.get(key)
        if pending is not None:
            pending.result()

    # the same, waited for (tests, tools)
    def get(self, key: str) -> TargetResult | None:
        """The stored result, or None on a miss (an unsigned entry or a cache that failed is a miss too)."""
        self._settled(key)
        return self._now(lambda: self._read(key), None)

    def has_all(self, keys: Iterable[str]) -> bool:
        """Whether every key has a signed response (the signature checked, nothing parsed)."""
        keys = list(keys)
        for key in keys:
            self._settled(key)
        return self._now(lambda: all(self._has(key) for key in keys), False)

    def put(self, key: str, result: TargetResult, target_kind: str | None = None) -> None:
        """Store a successful result. A cache that cannot be written never fails the sample."""
        self._run(lambda: self._write(key, result, target_kind), None)

    def get_turns(self, key: str) -> list[TargetResult] | None:
        """A stored conversation, one result per turn, or None on a miss."""
        self._settled(key)
        return self._now(lambda: self._read_turns(key), None)

    def close(self) -> None:
        """Finish the stores handed over (each gives up after the short busy timeout), then close."""
        with contextlib.suppress(RuntimeError):
            self._pool.submit(self._db.close)
        self._pool.shutdown(wait=True)
        with self._reading:
            if self._reader is not None:
                self._reader.close()
                self._reader = None


def cache_secret() -> bytes:
    """The key every cache row is signed with, kept outside the project: `OMK_CACHE_KEY` when set
    (a CI secret, so shards can share a cache), else a random key in a file of the user's own
    (`$XDG_STATE_HOME/omk/cache-key`, or `~/.local/state/omk/cache-key`), created 0600 on first use.
    OSError when neither can be had (then the run goes without the cache)."""
    import os
    import secrets

    if given := os.environ.get(KEY_ENV, ""):
        return given.encode("utf-8", "surrogatepass")
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    folder = Path(state) / "omk"
    path = folder / "cache-key"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        from omk.io.safe_files import read_regular_bytes

        key = read_regular_bytes(path, 4096).strip()
        if len(key) < 32:
            raise OSError(f"{path}: too short to be omk's cache key; delete it and omk makes a new one") from None
        return key
    made = secrets.token_hex(32)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(made + "\n")
    return made.encode("ascii")


def open_cache(path: Path | None = None) -> ResponseCache | None:
    """The cache under the current directory, or None (with a warning) if it cannot be opened."""
    import sys

    path = path or Path.cwd() / DEFAULT_PATH
    try:
        return ResponseCache(path)
    except (OSError, sqlite3.Error) as exc:  # the key file cannot be had, or the file is locked or broken
        print(for_terminal(f"warning: running without the response cache: {path}: {exc}"), file=sys.stderr)
        return None
