"""Child programs omk talks to over pipes: `cmd:` targets, the Claude Code CLI, command judges.

Each runs in its own process group (`start_program`), so stopping it (`stop_program`) kills
whatever it started too. A descendant can leave the group (`setsid`, a daemon's double fork);
on Linux `stop_program` finds those too, through /proc: every process still below the program
in the process tree, and every process that carries the call's mark, an environment variable
(`OMK_CALL_MARK`) set for the program and inherited by whatever it starts, however far it moved
away. Only a descendant that both left the tree and cleared its environment escapes; running omk
in a container (or a cgroup of its own) is the stronger bound (docs/security.md).

What a program prints on stdout is kept up to `max_output_bytes` (omk.yaml), read by the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import secrets
import signal
import weakref
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

DEFAULT_MAX_OUTPUT_BYTES = 32 * 1024 * 1024  # stdout kept per call (omk.yaml `max_output_bytes`)
STREAM_LIMIT = 64 * 1024  # asyncio's own default for one stdout line
PIPE_GRACE_S = 2.0  # after the kill: how long the pipes may stay open (a grandchild holding them)
MARK_VARIABLE = "OMK_CALL_MARK"  # set for each program; its descendants inherit it
_PROC = Path("/proc")
_KILL_ROUNDS = 5  # scans after a kill: a descendant may have forked meanwhile
_marks: weakref.WeakKeyDictionary[asyncio.subprocess.Process, str] = weakref.WeakKeyDictionary()


_not_started: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("omk_no_programs", default=None)
_keys_missing: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("omk_keys_missing", default=None)


@contextlib.contextmanager
def no_programs() -> Iterator[list[str]]:
    """Within it (a dry run) no program starts: `may_start` says no and notes what was not done,
    in the list this yields, and `start_program` refuses. A missing API key is noted too
    (`key_missing`, read back with `keys_missing`) instead of refused: nothing is called."""
    outer = _not_started.get()
    if outer is not None:  # already inside one: its notes collect these too
        yield outer
        return
    notes: list[str] = []
    token, keys = _not_started.set(notes), _keys_missing.set([])
    try:
        yield notes
    finally:
        _not_started.reset(token)
        _keys_missing.reset(keys)


def key_missing(message: str) -> bool:
    """Whether a missing API key (said by `message`) may pass: True inside `no_programs` (a dry
    run sends nothing, so it needs no key), which notes it for `keys_missing`; False otherwise,
    and the caller refuses."""
    found = _keys_missing.get()
    if found is None:
        return False
    if message not in found:
        found.append(message)
    return True


def keys_missing() -> list[str]:
    """The missing keys noted in the current dry run, in the order met."""
    return list(_keys_missing.get() or [])


def may_start(what: str) -> bool:
    """Whether a program may start now: False inside `no_programs`, which then notes `what` (the
    check or value given up, such as "the claude CLI's version")."""
    notes = _not_started.get()
    if notes is None:
        return True
    if what not in notes:
        notes.append(what)
    return False


def max_output_bytes(settings: Mapping[str, Any] | None) -> int:
    """The run's `max_output_bytes`, or the default when it is unset."""
    value = (settings or {}).get("max_output_bytes")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else DEFAULT_MAX_OUTPUT_BYTES


async def start_program(
    argv: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None, limit: int = STREAM_LIMIT
) -> asyncio.subprocess.Process:
    """Start `argv` with stdin, stdout and stderr as pipes, in a process group of its own (so a
    kill takes its children too). OSError when it cannot start; the caller says so its own way.
    `limit` is the longest stdout line a `readline` accepts. `env` (omk's own environment when
    None) gets the call's mark, by which `stop_program` finds descendants that left the group."""
    if not may_start(f"{Path(argv[0]).name} (a program)"):
        raise RuntimeError(f"a dry run starts no program, not even {Path(argv[0]).name}")
    mark = secrets.token_hex(12)
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env={**(os.environ if env is None else env), MARK_VARIABLE: mark},
        start_new_session=True,
        limit=limit,
    )
    _marks[proc] = mark
    return proc


async def stop_program(proc: asyncio.subprocess.Process) -> None:
    """Kill the program's whole process group if it is still running, and reap it. For programs
    started by `start_program` (or any started with `start_new_session=True`)."""
    kill_program(proc)
    # Reap it, and see its pipes to the end, even when cancelled again meanwhile: on Ctrl-C
    # asyncio.run cancels the run and then every task still going, and a program or pipe left
    # behind meets a closed loop ("Event loop is closed" tracebacks at exit). A killed program
    # ends in milliseconds.
    cancelled = False
    settling = asyncio.ensure_future(_settle(proc))
    while not settling.done():
        try:
            await asyncio.shield(settling)
        except asyncio.CancelledError:
            cancelled = True
    if proc.stdin is not None and not proc.stdin.is_closing():
        proc.stdin.close()
    if cancelled:
        raise asyncio.CancelledError


def kill_program(proc: asyncio.subprocess.Process) -> None:
    """Kill the program's process group and every stray it left (`kill_strays`), at once and
    without the event loop: usable where the loop has ended. `stop_program` also reaps it."""
    # The group, even when the program itself has exited: a child it left behind (holding the
    # pipes, or just running) must not outlive the call. An empty group is simply not found.
    below = _descendants(proc.pid)  # before the kill: once the program dies they move to init
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        elif proc.returncode is None:  # pragma: no cover - not POSIX
            proc.kill()
    mark = _marks.pop(proc, None)
    if mark is not None:
        kill_strays(proc.pid, mark, below)


async def _settle(proc: asyncio.subprocess.Process) -> None:
    """Until the program has exited and its stdout and stderr have reached their end, for
    `PIPE_GRACE_S` at most: a grandchild that left the process group (setsid) can hold the pipes
    open for as long as it lives, and Python 3.11's `wait()` waits for the pipes too."""
    try:
        async with asyncio.timeout(PIPE_GRACE_S):
            with contextlib.suppress(ProcessLookupError):
                await proc.wait()
            for stream in (proc.stdout, proc.stderr):
                while stream is not None and not stream.at_eof():
                    try:
                        await stream.read(65536)
                    except RuntimeError:  # the reader of the program's stderr is still winding down
                        await asyncio.sleep(0.005)
    except TimeoutError:
        # Close our ends of the pipes (SubprocessTransport.close; asyncio.subprocess.Process keeps
        # its transport private), so nothing is left for a closed loop to trip over.
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()
    await asyncio.sleep(0)  # the pipes' closing callbacks run on this turn of the loop


def _processes() -> dict[int, tuple[int, Path]]:
    """Every living process /proc shows: pid -> (parent pid, its /proc folder). Empty without /proc."""
    found: dict[int, tuple[int, Path]] = {}
    with contextlib.suppress(OSError):
        for entry in _PROC.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text(encoding="utf-8", errors="replace").rsplit(")", 1)[1].split()
                if fields[0] not in ("Z", "X"):  # a dead process waiting to be reaped is no threat
                    found[int(entry.name)] = (int(fields[1]), entry)
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
    return found


def _descendants(pid: int, table: dict[int, tuple[int, Path]] | None = None) -> set[int]:
    """The processes below `pid` in the process tree (on Linux; empty elsewhere)."""
    table = _processes() if table is None else table
    children: dict[int, list[int]] = {}
    for child, (parent, _) in table.items():
        children.setdefault(parent, []).append(child)
    found: set[int] = set()
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop()
        if p not in found:
            found.add(p)
            todo.extend(children.get(p, []))
    return found


def _marked(table: dict[int, tuple[int, Path]], mark: str) -> set[int]:
    """The processes whose environment carries `mark` (those this user may read)."""
    needle = f"{MARK_VARIABLE}={mark}".encode()
    found = set()
    for pid, (_, folder) in table.items():
        with contextlib.suppress(OSError):
            if needle in (folder / "environ").read_bytes():
                found.add(pid)
    return found


def kill_strays(pid: int, mark: str, known: Iterable[int] = ()) -> None:
    """Kill what a program left running outside its process group: `known` (its descendants seen
    before), whatever is still below `pid`, and every process carrying the call's `mark`, until
    a scan finds none."""
    targets = set(known)
    for _ in range(_KILL_ROUNDS):
        table = _processes()
        targets |= _descendants(pid, table) | _marked(table, mark)
        targets &= table.keys()
        targets.discard(os.getpid())
        if not targets:
            return
        for stray in targets:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(stray, signal.SIGKILL)
        targets = set()


STDERR_TAIL = 64 * 1024  # the last bytes of a program's stderr kept for its error message


class OutputTooLarge(Exception):
    """A program printed more than its cap on stdout (the program is stopped by the caller)."""

    def __init__(self, cap: int):
        super().__init__(f"printed more than {cap} bytes on stdout; raise max_output_bytes in omk.yaml if that is expected")
        self.cap = cap


async def communicate(proc: asyncio.subprocess.Process, data: bytes, max_stdout: int) -> tuple[bytes, bytes]:
    """`proc.communicate(data)` within bounds: stdout up to `max_stdout` bytes (more raises
    `OutputTooLarge`), and only the last `STDERR_TAIL` bytes of stderr, however much it prints."""
    stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
    assert stdin is not None and stdout is not None and stderr is not None

    async def feed() -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stdin.write(data)
            await stdin.drain()
        stdin.close()

    async def drain_out() -> bytes:
        out = bytearray()
        while chunk := await stdout.read(65536):
            out += chunk
            if len(out) > max_stdout:
                raise OutputTooLarge(max_stdout)
        return bytes(out)

    async def drain_err() -> bytes:
        tail = bytearray()
        while chunk := await stderr.read(65536):
            tail = (tail + chunk)[-STDERR_TAIL:]
        return bytes(tail)

    _, out, err = await asyncio.gather(feed(), drain_out(), drain_err())
    await proc.wait()
    return out, err
