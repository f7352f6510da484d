"""`cmd:COMMAND`: a program per judge call. It reads one JSON line
`{"type": "judge_request", "system", "prompt", "model"}` on stdin and prints the reply text, or a
JSON object with `output` (and optionally `cost_usd`, `tokens`).

The command line is split like a shell would (shlex) but never run through one; the program runs
in its own process group, so a timeout or Ctrl-C stops its children too (omk.io.process).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import shutil
from collections.abc import Mapping
from typing import Any

from omk.core.errors import ConfigError
from omk.core.secrets import Masker
from omk.domain.target_identity import CacheIdentity, command_files, environment, selected
from omk.io.process import DEFAULT_MAX_OUTPUT_BYTES, max_output_bytes, start_program, stop_program
from omk.judge.clients import Reply
from omk.llm.errors import CallError

STDERR_CHARS = 300


class CommandJudge:
    """A program per judge call; stdin one JSON line, stdout the reply."""

    kind = "cmd"

    def __init__(self, spec: str, command: str, mask: Masker | None = None, max_bytes: int | None = None):
        self.spec = spec
        self.mask = mask or Masker()
        self.max_bytes = max_bytes or DEFAULT_MAX_OUTPUT_BYTES
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigError(f"judge {spec!r}: cannot split the command line: {exc}") from None
        if not self.argv:
            raise ConfigError(f"judge {spec!r}: expected cmd:COMMAND")
        if shutil.which(self.argv[0]) is None:
            raise ConfigError(f"judge {spec!r}: command not found: {self.argv[0]}")
        self.model = command

    @classmethod
    def from_spec(cls, arg: str, spec: str, *, settings: Mapping[str, Any]) -> CommandJudge:
        return cls(spec, arg.strip(), Masker.for_run(settings), max_output_bytes(settings))

    def identity(self) -> CacheIdentity:
        """The command and the files it names (relative ones from where omk runs, as the program
        is started), and the variables that pick its model or endpoint, as for a `cmd:` target."""
        import os

        return CacheIdentity(
            kind="cmd",
            model=None,
            endpoint=None,
            program={"command": self.argv, "files": command_files(self.argv, os.getcwd())},
            environment=environment(selected(routing=True), self.mask),
            settings={},
        )

    def describe(self) -> dict[str, Any]:
        return {"spec": self.spec, "kind": "cmd", "command": self.argv}

    async def complete(self, system: str, prompt: str, timeout: float) -> Reply:
        request = json.dumps({"type": "judge_request", "system": system, "prompt": prompt, "model": None}, ensure_ascii=False)
        try:
            proc = await start_program(self.argv)  # its own process group: a timeout or Ctrl-C stops its children too
        except OSError as exc:
            raise CallError(f"{self.spec}: cannot start: {exc}") from None
        try:
            async with asyncio.timeout(timeout):
                out, err = await _talk(proc, (request + "\n").encode("utf-8"), self.max_bytes)
        except TimeoutError:
            raise CallError(f"{self.spec}: timed out after {timeout:g}s", retryable=True) from None
        finally:
            await stop_program(proc)  # reaped, pipes drained (2 s at most), even when cancelled
        if proc.returncode != 0:
            tail = self.mask.clip(self.mask.cut_edges(err.decode("utf-8", "replace").strip()), STDERR_CHARS, keep_end=True)
            raise CallError(f"{self.spec}: exited with code {proc.returncode}" + (f": {tail}" if tail else ""))
        return _command_reply(out.decode("utf-8", "replace"))

    async def close(self) -> None:
        return None


async def _talk(proc: asyncio.subprocess.Process, request: bytes, max_bytes: int) -> tuple[bytes, bytes]:
    """Send the request, read stdout (at most `max_bytes`: a CallError past it) and the tail of
    stderr until both close; memory stays bounded whatever the program writes."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(request)
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        await proc.stdin.drain()
    proc.stdin.close()

    async def tail(stream: asyncio.StreamReader) -> bytes:
        kept = b""
        while chunk := await stream.read(65536):
            kept = (kept + chunk)[-4 * STDERR_CHARS :]
        return kept

    errors = asyncio.ensure_future(tail(proc.stderr))
    out = bytearray()
    try:
        while chunk := await proc.stdout.read(65536):
            out += chunk
            if len(out) > max_bytes:
                raise CallError(f"judge command printed more than {max_bytes} bytes; raise max_output_bytes in omk.yaml if that is expected")
        err = await errors
    finally:
        errors.cancel()
    await proc.wait()
    return bytes(out), err


def _command_reply(stdout: str) -> Reply:
    """Plain text, one JSON object with `output`, or JSON lines ending in `{"type": "response"}`."""
    text = stdout.strip()
    candidates = [text] + [line for line in reversed(text.splitlines()) if line.strip().startswith("{")]
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("output"), str):
            cost = data.get("cost_usd", data.get("costUSD"))
            tokens: dict[str, Any] = data["tokens"] if isinstance(data.get("tokens"), dict) else {}
            return Reply(
                data["output"],
                float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
                {"input": _int(tokens.get("input")), "output": _int(tokens.get("output"))},
            )
    return Reply(text)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
