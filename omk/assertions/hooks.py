"""Run custom hooks in worker processes, so a hook that hangs or crashes fails alone.

One `HookRunner` per run (the caller creates it, puts it in `CheckContext.hooks` and awaits
`close()` at the end). Python hooks run in `python -m omk.assertions.hook_worker`, JS hooks
(`.js`, `.mjs`, `.cjs`) under `node` with the runner below. Workers are kept between calls, but
a worker serves the hooks of one folder only: what a hook imports or changes in its worker
cannot reach a hook of another folder. At most `max_workers` calls run at once. A call that
exceeds `timeout_s` kills its worker (its process group and strays, as `omk.io.process` does for
every program); the next call starts a fresh one. Protocol: JSON lines; answers are the stdout lines that start with MARKER.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from omk.io.process import kill_program, start_program, stop_program
from omk.samples.model import Outcome

MARKER = b"\x1eomk-hook "
PYTHON_SUFFIXES = (".py",)
JS_SUFFIXES = (".js", ".mjs", ".cjs")
DEFAULT_TIMEOUT_S = 30.0

# The node side of the protocol. Hooks export `default` or `check`, may be async; console
# output goes to stderr so that it cannot be mistaken for an answer.
NODE_RUNNER = r"""
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
const MARKER = '\x1eomk-hook ';
const write = process.stdout.write.bind(process.stdout);
console.log = console.info = console.debug = (...args) => console.error(...args);
function normalize(result) {
  if (typeof result === 'boolean') return { pass: result, message: null, score: null };
  if (result !== null && typeof result === 'object') {
    const score = typeof result.score === 'number' && Number.isFinite(result.score) ? result.score : null;
    const message = result.message === undefined || result.message === null ? null : String(result.message);
    return { pass: Boolean(result.pass), message, score };
  }
  throw new TypeError(`hook returned ${result === null ? 'null' : typeof result}; ` +
    'expected a boolean or an object with pass, message, score');
}
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  const request = JSON.parse(line);
  const { file, output, ctx } = request.call;
  let answer;
  try {
    const mod = await import(pathToFileURL(file).href);
    const fn = typeof mod.default === 'function' ? mod.default : mod.check;
    if (typeof fn !== 'function') throw new Error('custom assertion module must export default or check');
    answer = { id: request.id, ok: true, result: normalize(await fn(output, ctx)) };
  } catch (err) {
    answer = { id: request.id, ok: false, error: String(err && err.message ? err.message : err) };
  }
  write(MARKER + JSON.stringify(answer) + '\n');
}
"""


class HookError(Exception):
    """The worker died or spoke nonsense; the message says why."""


class _Worker:
    """One worker process and the tail of its stderr (for crash messages)."""

    def __init__(self, proc: asyncio.subprocess.Process):
        self.proc = proc
        self.stderr_tail = b""
        self._drain = asyncio.ensure_future(self._drain_stderr())

    @classmethod
    async def start(cls, argv: list[str], env: dict[str, str]) -> _Worker:
        # its own process group, marked: stopping it ends whatever its hooks started too
        return cls(await start_program(argv, env=env, limit=1 << 24))

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(4096):
            self.stderr_tail = (self.stderr_tail + chunk)[-2000:]

    async def call(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        line = json.dumps(request, ensure_ascii=False, default=str) + "\n"
        try:
            self.proc.stdin.write(line.encode())
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise HookError(await self._death()) from None
        while True:
            try:
                raw = await self.proc.stdout.readline()
            except (ValueError, asyncio.LimitOverrunError):  # an answer over the 16 MB line limit
                raise HookError("the hook's answer is larger than 16 MB") from None
            if not raw:
                raise HookError(await self._death())
            if raw.startswith(MARKER):
                answer = json.loads(raw[len(MARKER) :])
                if answer.get("id") == request["id"]:
                    return answer

    async def _death(self) -> str:
        code = await self.proc.wait()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._drain, 1.0)
        tail = self.stderr_tail.decode(errors="replace").strip().splitlines()
        detail = f": {tail[-1]}" if tail else ""
        return f"hook worker exited with code {code}{detail}"

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    def kill(self) -> None:
        """Kill the worker and whatever its hooks started. Works even after its loop closed."""
        kill_program(self.proc)
        with contextlib.suppress(RuntimeError):  # the loop may be closed already
            self._drain.cancel()

    def abandon(self) -> None:
        """Kill a worker whose event loop has ended (a runner reused across `asyncio.run`s).

        Its transport cannot be closed through the dead loop, so it is marked closed and the
        process reaped directly; otherwise its finalizer raises "Event loop is closed".
        """
        self.kill()
        transport = getattr(self.proc, "_transport", None)
        popen = getattr(transport, "_proc", None)
        if popen is not None:
            with contextlib.suppress(Exception):
                popen.wait(timeout=1)
        if transport is not None and hasattr(transport, "_closed"):
            transport._closed = True
            for pipe in getattr(transport, "_pipes", {}).values():
                with contextlib.suppress(Exception):
                    pipe.pipe._closing = True
                    pipe.pipe._pipe.close()
                    pipe.pipe._pipe = None

    async def stop(self, grace_s: float = 1.0) -> None:
        """Ask politely (EOF on stdin), then end its process group and strays, and reap it."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        if grace_s > 0 and self.proc.returncode is None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.proc.wait(), grace_s)
        self._drain.cancel()  # stop_program reads the pipes to their end itself
        with contextlib.suppress(ProcessLookupError):
            await stop_program(self.proc)


# Which hooks may share a worker: those of one language in one folder. A worker keeps what its
# hooks imported (a `helpers.py` beside them) and whatever they changed in it, so hooks of
# another folder get a worker of their own and a hook's verdict depends on its folder's code only.
_Key = tuple[str, str]


class _Pool:
    """The workers of a run: idle ones kept per (language, hook folder), at most `size` busy at
    a time, and at most `keep` alive (the idle one used longest ago is stopped first)."""

    def __init__(self, env: dict[str, str], size: int):
        self.env = env
        self.idle: list[tuple[_Key, _Worker]] = []  # least recently used first
        self.all: set[_Worker] = set()
        self.slots = asyncio.Semaphore(size)
        self.keep = max(size, 4)

    async def acquire(self, key: _Key, argv: list[str]) -> _Worker:
        for i in range(len(self.idle) - 1, -1, -1):
            if self.idle[i][0] == key:
                worker = self.idle.pop(i)[1]
                if worker.alive:
                    return worker
                self.all.discard(worker)
        while len(self.all) >= self.keep and self.idle:
            _, oldest = self.idle.pop(0)
            self.all.discard(oldest)
            await oldest.stop(grace_s=0)
        worker = await _Worker.start(argv, self.env)
        self.all.add(worker)
        return worker

    async def release(self, key: _Key, worker: _Worker, healthy: bool) -> None:
        if healthy and worker.alive:
            self.idle.append((key, worker))
        else:
            self.all.discard(worker)
            await worker.stop(grace_s=0)


class HookRunner:
    """Runs hook files in persistent worker processes with a per-call time limit."""

    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S, max_workers: int = 2, python: str | None = None):
        self.timeout_s = timeout_s
        self.max_workers = max(1, max_workers)
        self.python = python or sys.executable
        self._pools: dict[str, _Pool] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ids = itertools.count(1)

    async def __aenter__(self) -> HookRunner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def run(self, file: Path, output: str, ctx: dict[str, Any]) -> Outcome:
        """Call the hook in `file` as `check(output, ctx)`; never raises for hook failures."""
        suffix = file.suffix.lower()
        if suffix in PYTHON_SUFFIXES:
            language = "python"
        elif suffix in JS_SUFFIXES:
            language = "node"
            if shutil.which("node") is None:
                return _failure(f"node is not on PATH, so the JS hook {file.name} cannot run")
        else:
            return _failure(f"unsupported hook file {file.name} (use .py, .js or .mjs)")
        if not file.is_file():
            return _failure(f"hook file not found: {file}")
        answer = await self._call(language, file, {"file": str(file), "output": output, "ctx": ctx})
        if isinstance(answer, Outcome):
            return answer
        if not answer.get("ok"):
            return _failure(str(answer.get("error")))
        result = answer["result"]
        score = result.get("score")
        return Outcome(
            bool(result.get("pass")),
            metric=score,
            score=score if score is not None and 1 <= score <= 5 else None,
            message=result.get("message"),
        )

    async def _call(self, language: str, file: Path, call: dict[str, Any]) -> dict[str, Any] | Outcome:
        """The worker's answer to one call, or the Outcome of a call that failed."""
        pool = self._pool()
        key = (language, str(file.resolve().parent))
        async with pool.slots:
            worker = await pool.acquire(key, self._argv(language))
            healthy = False
            try:
                answer = await asyncio.wait_for(worker.call({"id": next(self._ids), "call": call}), self.timeout_s)
                healthy = True
            except TimeoutError:
                return Outcome(False, error=True, message=f"custom assertion timed out ({self.timeout_s:g}s)")
            except HookError as exc:
                return _failure(str(exc))
            finally:
                await pool.release(key, worker, healthy)
        return answer

    def _pool(self) -> _Pool:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # workers and semaphores belong to one event loop
            self._abandon()
            self._loop = loop
        pool = self._pools.get("all")
        if pool is None:
            pool = self._pools["all"] = _Pool(self._env(), self.max_workers)
        return pool

    def _argv(self, language: str) -> list[str]:
        if language == "python":
            return [self.python, "-m", "omk.assertions.hook_worker"]
        return [shutil.which("node") or "node", "--input-type=module", "-e", NODE_RUNNER]

    @staticmethod
    def _env() -> dict[str, str]:
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # so the worker finds omk when not installed
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def _abandon(self) -> None:
        loop_closed = self._loop is not None and self._loop.is_closed()
        for pool in self._pools.values():
            for worker in pool.all:
                worker.abandon() if loop_closed else worker.kill()
        self._pools.clear()

    async def close(self) -> None:
        """Stop every worker. Safe to call twice."""
        if self._loop is not asyncio.get_running_loop():
            self._abandon()  # workers of an earlier loop cannot be awaited here
            return
        pools, self._pools = self._pools, {}
        workers = [w for pool in pools.values() for w in pool.all]
        await asyncio.gather(*(w.stop() for w in workers), return_exceptions=True)


def _failure(reason: str) -> Outcome:
    return Outcome(False, error=True, message=f"custom assertion error: {reason}")
