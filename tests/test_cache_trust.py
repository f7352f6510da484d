"""The response cache decides a result only when this machine (or a CI secret it shares) wrote
it, and a cache another process holds never delays or fails a sample. Real omk runs, a real
sqlite file, a second process holding its lock."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

from cli_support import omk_env, run_omk

AGENT = """\
import json, os, sys
sys.stdin.read()
print(json.dumps({"response": os.environ.get("OMK_TEST_ANSWER", "hi")}))
"""
TARGET = f"cmd:{sys.executable} agent.py"


def project(tmp: Path, ids: list[str]) -> None:
    (tmp / "agent.py").write_text(AGENT, encoding="utf-8")
    lines = "".join(f"  - {{ sample_id: {i}, prompt: p-{i}, assertions: [{{ type: contains, value: hi }}] }}\n" for i in ids)
    (tmp / "s.yaml").write_text("samples:\n" + lines, encoding="utf-8")


def env(tmp: Path, **extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("OMK_TARGET", "OMK_JUDGE", "OMK_CACHE_KEY")}
    return {**clean, "NO_COLOR": "1", "XDG_STATE_HOME": str(tmp / "state"), **extra}


def omk_eval(tmp: Path, *more: str, **extra: str) -> subprocess.CompletedProcess:
    return run_omk(
        "eval", "s.yaml", "--target", TARGET, "--quiet", *more,
        cwd=tmp, base=env(tmp, **extra), drop=(), columns=None, timeout=120,
    )  # fmt: skip


def test_a_cache_written_elsewhere_does_not_turn_a_failing_gate_into_a_pass(tmp_path):
    project(tmp_path, ["a", "b"])
    # someone else's machine: its agent passes, and its .omk/cache.sqlite comes with the pull request
    seeded = omk_eval(tmp_path, "--out", "theirs", OMK_CACHE_KEY="their-machine-key-0123456789")
    assert seeded.returncode == 0, seeded.stderr
    # here the agent fails: the committed answers must not stand in for it
    ours = omk_eval(tmp_path, "--out", "ours", OMK_TEST_ANSWER="nope")
    assert ours.returncode == 1, ours.stdout + ours.stderr
    report = json.loads((tmp_path / "ours" / "report.json").read_text(encoding="utf-8"))
    assert [r["cached"] for r in report["results"]] == [False, False]


def test_a_row_forged_with_the_public_key_recipe_is_a_miss(tmp_path):
    project(tmp_path, ["a"])
    assert omk_eval(tmp_path, "--out", "first").returncode == 0
    db = sqlite3.connect(tmp_path / ".omk" / "cache.sqlite")
    (key,) = db.execute("SELECT key FROM responses").fetchone()
    db.execute("UPDATE responses SET output = 'hi, forged' WHERE key = ?", (key,))  # the key recipe is public
    db.commit()
    db.close()
    again = omk_eval(tmp_path, "--out", "second", OMK_TEST_ANSWER="nope")
    assert again.returncode == 1, again.stdout + again.stderr
    result = json.loads((tmp_path / "second" / "report.json").read_text(encoding="utf-8"))["results"][0]
    assert result["cached"] is False
    assert result["output"] == '{"response": "nope"}'


def test_this_machines_cache_and_a_shared_ci_key_are_trusted(tmp_path):
    project(tmp_path, ["a"])
    assert omk_eval(tmp_path, "--out", "one").returncode == 0
    key_file = tmp_path / "state" / "omk" / "cache-key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600  # created for this user only
    assert omk_eval(tmp_path, "--out", "two", OMK_TEST_ANSWER="nope").returncode == 0  # a hit: the same machine
    shard = {"OMK_CACHE_KEY": "ci-secret-shared-by-shards-0123"}
    (tmp_path / ".omk" / "cache.sqlite").unlink()
    assert omk_eval(tmp_path, "--out", "three", **shard).returncode == 0
    (tmp_path / "state" / "omk" / "cache-key").unlink()  # another shard: a fresh machine, the same secret
    assert omk_eval(tmp_path, "--out", "four", OMK_TEST_ANSWER="nope", **shard).returncode == 0


HOLDER = """\
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(120)
"""
# omk eval in a child whose sqlite connections count the statements that found the cache
# locked: each such statement is one busy timeout waited out, whatever the machine's speed.
COUNTED = """\
import sqlite3, sys
locked = []
class Counted(sqlite3.Connection):
    def execute(self, *args, **kwargs):
        try:
            return super().execute(*args, **kwargs)
        except sqlite3.OperationalError as exc:
            locked.extend(["locked"] if "locked" in str(exc) else [])
            raise
plain = sqlite3.connect
sqlite3.connect = lambda *args, **kwargs: plain(*args, factory=Counted, **kwargs)
from omk.cli.main import main
code = main(sys.argv[1:])
print("waits on the lock:", len(locked), file=sys.stderr)
sys.exit(code)
"""


def test_a_cache_locked_by_another_process_is_skipped_with_a_warning_and_never_fails_a_sample(tmp_path):
    project(tmp_path, ["warm"])
    assert omk_eval(tmp_path, "--out", "warm").returncode == 0  # the cache file exists, as in a project
    project(tmp_path, [f"s{i}" for i in range(6)])
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / ".omk" / "cache.sqlite")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        proc = subprocess.run(
            [sys.executable, "-c", COUNTED, "eval", "s.yaml", "--target", TARGET, "--quiet", "--out", "locked", "--timeout", "3", "--concurrency", "2"],
            cwd=tmp_path, env=omk_env(base=env(tmp_path), drop=(), columns=None), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "locked" / "report.json").read_text(encoding="utf-8"))
    assert [r["status"] for r in report["results"]] == ["ok"] * 6
    assert proc.stderr.count("cannot be used") == 1
    assert "the run goes on without it" in proc.stderr
    assert "waits on the lock: 1\n" in proc.stderr, proc.stderr  # one busy timeout for the run, not one per sample


def test_has_all_asks_for_every_key_signed(tmp_path):
    from omk.domain.target_result import TargetResult
    from omk.domain.trace_io import parse_trace
    from omk.store.cache import ResponseCache

    cache = ResponseCache(tmp_path / "c.sqlite", secret=b"k" * 32)
    try:
        for key in ("a", "b"):
            cache.put(key, TargetResult(output=f"out {key}", trace=parse_trace({})))
        assert cache.has_all(["a", "b"])
        assert cache.has_all([])
        assert not cache.has_all(["a", "missing"])
        cache._run(lambda: cache._db.execute("UPDATE responses SET output = 'forged' WHERE key = 'b'"), None)
        assert not cache.has_all(["a", "b"])
        assert cache.has_all(["a"])
    finally:
        cache.close()
