"""`cmd:COMMAND LINE`: a program speaking the command protocol (docs/targets.md), once per sample.

In a conversation the program is started once per turn: the request's `messages` carry the
earlier turns (neutral messages, omk.domain.messages) and `turn` says which turn this is.

omk writes one JSON line `{"type": "request", …}` to the program's stdin. The program may ask
for tools with `{"type": "tool_call", "id", "tool", "input"}` lines on stdout, which omk answers
on stdin with `{"type": "tool_result", "id", "output", "is_error"}` from the mock sandbox, and
ends with `{"type": "response", "output", …}`. omk 0.54 executors work unchanged: a program
that prints one JSON object with `output` (and `costUSD`, `numTurns`, `toolCalls`, token
fields), or plain text, is accepted too. When the sample offers no tools, stdin is closed after
the request line, so a program that reads stdin to the end (0.54 style) does not wait forever.

The command line is split like a shell would (shlex) but never run through one. The program
runs in its own process group; a timeout or a cancelled run kills the whole group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import shutil
import sys
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from omk.core.errors import ConfigError
from omk.core.extras import installed, missing_message
from omk.core.secrets import Masker
from omk.domain.messages import Message, assistant_message, tool_message, user_message
from omk.domain.target_identity import CacheIdentity, command_files, environment, selected
from omk.domain.trace_io import TraceFormatError, parse_trace
from omk.domain.workspace import FreshFolder, checks_workspace
from omk.io.process import DEFAULT_MAX_OUTPUT_BYTES, max_output_bytes, start_program, stop_program
from omk.records import Trace
from omk.samples.model import Sample
from omk.settings.target_settings import TargetSettings
from omk.targets.agent_loop import system_prompt
from omk.targets.base import TargetError, TargetResult
from omk.targets.masked import mask_result
from omk.targets.mocks import MockSandbox, as_text, offered_tools
from omk.targets.prelude import history_for, system_for
from omk.targets.session import Session

if TYPE_CHECKING:  # imported when a sample is served over MCP: it loads the MCP SDK
    from omk.targets.mcp_sandbox import McpSandboxServer

INTERPRETERS = {"node", "bash", "sh", "zsh", "ruby", "perl", "php", "bun", "deno"}
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl", ".php")
STDERR_TAIL = 4000
LINE_LIMIT = 16 * 1024 * 1024  # longest stdout line accepted (a big JSON reply on one line)
EXIT_POLL_S = 0.05  # after a response: how often to look whether the program has exited
STDERR_GRACE_S = 0.5  # after it exited: how long its stderr may stay open (a child holding it)


def _is_interpreter(name: str) -> bool:
    base = Path(name).name.lower()
    return base in INTERPRETERS or base.startswith("python")


def _runs_omk_module(argv: list[str]) -> bool:
    """`python -m omk.…`: omk's own modules (its example agents) are only where omk is installed."""
    index = argv.index("-m") if "-m" in argv else -1
    return 0 < index < len(argv) - 1 and argv[index + 1].split(".")[0] == "omk"


def _path_like(token: str) -> bool:
    return "/" in token or "\\" in token or token.startswith(".")


def command_argv(line: str, base_dir: Path, spec: str) -> list[str]:
    """Split the command line; resolve a relative program or script path against `base_dir`."""
    try:
        argv = shlex.split(line)
    except ValueError as exc:
        raise ConfigError(f"target {spec!r}: cannot split the command line: {exc}") from None
    if not argv:
        raise ConfigError(f"target {spec!r}: empty command line")

    def resolve(token: str) -> str:
        path = Path(token).expanduser()
        if path.is_absolute():
            return str(path)
        candidate = base_dir / path
        return str(candidate.resolve()) if candidate.exists() else token

    program = argv[0]
    if _path_like(argv[0]):
        argv[0] = resolve(argv[0])
    elif _is_interpreter(argv[0]):
        for i, arg in enumerate(argv[1:], 1):
            if arg in ("-m", "-c", "-e", "--eval"):
                break  # a module or inline code, not a file
            if arg.startswith("-"):
                continue
            if _path_like(arg) or arg.lower().endswith(SCRIPT_SUFFIXES):
                argv[i] = resolve(arg)
                if not Path(argv[i]).is_file() and not any(c.isspace() for c in arg):  # not `bash -lc "a/b …"`
                    raise ConfigError(f"target {spec!r}: script not found: {arg} (in {base_dir}); check the path after {argv[0]}")
            break
        if argv[0] in ("python", "python3") and (shutil.which(argv[0]) is None or _runs_omk_module(argv)):
            argv[0] = sys.executable  # no `python` on PATH, or a module of omk's: the interpreter running omk
    if not Path(argv[0]).is_file() and shutil.which(argv[0]) is None:
        raise ConfigError(f"target {spec!r}: command not found: {argv[0]}")
    if _path_like(program) and not os.access(argv[0], os.X_OK):
        raise ConfigError(
            f"target {spec!r}: {program} is not executable: run `chmod +x {program}`, or name its interpreter (cmd:python {program})"
        )
    return argv


def _serves_mcp(settings: TargetSettings, spec: str) -> bool:
    """omk.yaml's `cmd.mcp`: whether each sample with tools gets an MCP server (needs omk[mcp])."""
    block = settings.cmd or {}
    unknown = sorted(set(block) - {"mcp"})
    if unknown:
        raise ConfigError(f"omk.yaml cmd.{unknown[0]}: unknown key (cmd: takes mcp)")
    value = block.get("mcp", False)
    if not isinstance(value, bool):
        raise ConfigError(f"omk.yaml cmd.mcp: must be true or false, not {value!r}")
    if value and not installed("mcp"):
        raise ConfigError(missing_message("mcp", f"target {spec!r} with cmd.mcp"))
    return value


def _tail(data: bytes, mask: Masker) -> str:
    """The end of a program's stderr, masked before it is cut (the buffer may itself start
    inside a key: its edges are masked too)."""
    return mask.clip(mask.cut_edges(data.decode("utf-8", errors="replace").strip()), 500, keep_end=True)


class CmdTarget:
    def __init__(
        self,
        command: str,
        spec: str,
        *,
        base_dir: Path | None = None,
        settings: TargetSettings | None = None,
        timeout: float | None = None,
    ):
        settings = settings or TargetSettings()
        self.spec = spec
        self.argv = command_argv(command, base_dir or Path.cwd(), spec)
        self.system = system_prompt(settings)
        self.timeout = timeout  # the run engine's --timeout applies too; either one kills the program
        self.mask = Masker.for_run(settings)
        self.max_output_bytes = max_output_bytes(settings)
        # A conversation with `workspace:` works in one folder from its first turn to its last;
        # the key is the conversation's mock sandbox, which every turn's Session shares.
        self._folders: weakref.WeakKeyDictionary[MockSandbox, FreshFolder] = weakref.WeakKeyDictionary()
        self.mcp = _serves_mcp(settings, spec)  # serve each sample's mocks over MCP (cmd.mcp in omk.yaml)
        self._servers: weakref.WeakKeyDictionary[MockSandbox, McpSandboxServer] = weakref.WeakKeyDictionary()

    @classmethod
    def from_spec(cls, arg: str, spec: str, *, base_dir: Path | None, settings: TargetSettings) -> CmdTarget:
        return cls(arg, spec, base_dir=base_dir, settings=settings)

    def describe(self) -> dict[str, Any]:
        served = {"mcp": True} if self.mcp else {}  # the sample's mocks served over MCP
        return {"kind": "cmd", "spec": self.spec, "command": self.argv, "system": self.system.describe(), **served}

    def cache_identity(self) -> CacheIdentity:
        """The command and the content of every file it names, so editing the agent invalidates;
        the program inherits omk's environment, so the variables that pick its model and
        endpoint (`*_BASE_URL`, `*_MODEL`…) and the proxy variables count too. Serving the
        mocks over MCP counts as well (an agent offered no server answers otherwise)."""
        served = {"mcp": True} if self.mcp else {}
        return CacheIdentity(
            kind="cmd",
            model=None,
            endpoint=None,  # the program decides where it calls
            program={"command": self.argv, "files": command_files(self.argv)},
            environment=environment(selected(routing=True), self.mask),
            settings={"system": self.system.text, **served},
        )

    def _cwd(self, sample: Sample) -> Path:
        if not sample.cwd:
            return sample.base_dir
        cwd = Path(sample.cwd).expanduser()
        return cwd if cwd.is_absolute() else sample.base_dir / cwd

    async def run(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult:
        if not sample.workspace:
            return await self._run_in(self._cwd(sample), sample, prompt, session)
        sandbox = session.sandbox if session else MockSandbox.for_sample(sample)
        folder = self._folders.get(sandbox) if session is not None and session.index > 0 else None
        if folder is None:
            folder = FreshFolder(sample, "omk-cmd-")
            if session is not None:
                self._folders[sandbox] = folder
        last = session is None or session.index == session.count - 1
        handed = False
        try:
            result = await self._run_in(folder.work, sample, prompt, session)
            notes = folder.notes if session is None or session.index == 0 else []
            changes, unread = folder.changes(self.mask)
            result.trace = msgspec.structs.replace(result.trace, workspace=changes, notes=(*notes, *result.trace.notes, *unread))
            if last and checks_workspace(sample):  # the folder stays for those checks; the run engine removes it
                result.workspace, handed = folder.hand_over(changes), True
            return result
        finally:
            if last:
                self._folders.pop(sandbox, None)
                if not handed:
                    folder.remove()

    async def _run_in(self, cwd: Path, sample: Sample, prompt: str, session: Session | None) -> TargetResult:
        if not cwd.is_dir():
            raise TargetError(f"cwd {str(cwd)!r} is not a folder")
        tools = offered_tools(sample)
        request = self._request(sample, prompt, session, tools)
        sandbox = session.sandbox if session else MockSandbox.for_sample(sample)
        # Served over MCP: tool calls come that way, so stdin closes after the request (an agent
        # that reads its prompt to the end of stdin works unchanged).
        server = await self._mcp_server(sandbox, tools, session) if self.mcp and tools else None
        if server is None:
            return await self._call(cwd, sandbox, request, keep_stdin=bool(tools), mask=self.mask, env=None)
        mask = self.mask.with_secrets(server.secrets)  # the endpoint and its token never reach a report
        try:
            result = await self._call(cwd, sandbox, request, keep_stdin=False, mask=mask, env={**os.environ, **server.env})
        finally:
            if session is None or session.index == session.count - 1:
                self._servers.pop(sandbox, None)
                await server.stop()
        return mask_result(result, mask)

    def _request(self, sample: Sample, prompt: str, session: Session | None, tools: list[dict[str, Any]]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "type": "request",
            "sample_id": sample.sample_id,
            "model": None,
            "system": system_for(self.system.text, sample) or "",
            "prompt": prompt,
            "messages": session.messages(prompt) if session else [*history_for(sample), user_message(prompt)],
            "tools": tools,
        }
        if session is not None:  # a conversation: the program is started once per turn
            request["turn"] = {"index": session.index, "count": session.count}
        if sample.variables:  # Big Sky `inputs.context`, for programs that build their own instructions
            request["context"] = sample.variables
        if sample.single_step:  # answer after one model step: report tool calls, omk will not run them
            request["single_step"] = True
        return request

    async def _call(
        self, cwd: Path, sandbox: MockSandbox, request: dict[str, Any], *, keep_stdin: bool, mask: Masker, env: dict[str, str] | None
    ) -> TargetResult:
        started = time.perf_counter()
        try:
            proc = await start_program(self.argv, cwd=cwd, limit=LINE_LIMIT, env=env)  # a kill takes its children too
        except OSError as exc:
            raise TargetError(f"cannot start {self.argv[0]}: {exc.strerror or exc}") from None
        try:
            async with asyncio.timeout(self.timeout):
                exchange = _Exchange(proc, sandbox, keep_stdin=keep_stdin, mask=mask, max_bytes=self.max_output_bytes)
                result = await exchange.run(request)
        except TimeoutError:
            raise TargetError(f"command timed out after {self.timeout:g}s and was killed", retryable=True) from None
        finally:
            await stop_program(proc)
        result.trace = msgspec.structs.replace(result.trace, latency_ms=round((time.perf_counter() - started) * 1000, 1))
        return result

    async def _mcp_server(self, sandbox: MockSandbox, tools: list[dict[str, Any]], session: Session | None) -> McpSandboxServer:
        """The sample's MCP server: started for a single prompt, kept across a conversation's turns
        (stopped after its last turn, or when the conversation ends early: the sandbox closes)."""
        server = self._servers.get(sandbox)
        if server is not None:
            return server
        from omk.targets.mcp_sandbox import McpSandboxServer

        server = McpSandboxServer(sandbox, tools)
        try:
            await server.start()
        except (OSError, SystemExit) as exc:  # uvicorn exits when the app fails to start
            raise TargetError(f"cannot start the MCP server for the sample's mocks: {exc}") from None
        if session is not None:
            self._servers[sandbox] = server
            sandbox.on_close(server.stop)
        return server

    async def close(self) -> None:
        for server in list(self._servers.values()):
            await server.stop()
        self._servers.clear()
        for folder in list(self._folders.values()):
            folder.remove()
        self._folders.clear()


class _Exchange:
    """One conversation with a running program."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        sandbox: MockSandbox,
        keep_stdin: bool,
        mask: Masker | None = None,
        max_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ):
        self.proc = proc
        self.max_bytes = max_bytes
        self.mask = mask or Masker()
        self.sandbox = sandbox
        self.keep_stdin = keep_stdin
        self.stderr = b""
        self._first = len(sandbox.calls)  # the calls this program makes come after these
        self._ids: dict[int, str] = {}  # a call's place in sandbox.calls -> the id the program gave it

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            self.stderr = (self.stderr + chunk)[-STDERR_TAIL:]

    async def _send(self, message: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing():
            return
        stdin.write((json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"))
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await stdin.drain()

    def _close_stdin(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()

    async def run(self, request: dict[str, Any]) -> TargetResult:
        stderr_task = asyncio.create_task(self._read_stderr())
        try:
            await self._send(request)
            if not self.keep_stdin:
                self._close_stdin()
            response, plain, exchanges = await self._converse()
            self._close_stdin()
            # A response, or the end of a one-shot program's output: a child still holding the
            # pipes cannot hold the run; it goes with the process group.
            code = await self._exit_after_response()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(stderr_task), STDERR_GRACE_S)
        finally:
            stderr_task.cancel()
        if code != 0:
            detail = _tail(self.stderr, self.mask) or "(no stderr)"
            raise TargetError(f"command exited with code {code}: {detail}")
        result = self._from_response(response, exchanges) if response is not None else self._from_one_shot(plain, exchanges)
        result.messages = [*self._history(), assistant_message(result.output)]
        return result

    async def _exit_after_response(self) -> int:
        """The program's exit code once it has exited, reading (and dropping) what it still prints.

        Not "once stdout closes": a child it started may hold the pipe for as long as it lives,
        and the program's answer is complete already. The child goes with the process group."""
        assert self.proc.stdout is not None
        while self.proc.returncode is None:
            try:
                async with asyncio.timeout(EXIT_POLL_S):
                    if not await self.proc.stdout.read(65536):  # everyone closed it
                        return await self.proc.wait()
            except TimeoutError:
                pass
        return self.proc.returncode

    async def _readline(self) -> bytes:
        """The next stdout line; b"" at the end of the output: when stdout closes, or once the
        program has exited and nothing more comes (a child it started may keep the pipe open)."""
        assert self.proc.stdout is not None
        try:
            while True:
                try:
                    async with asyncio.timeout(EXIT_POLL_S):  # a cancelled readline leaves the buffer as it was
                        return await self.proc.stdout.readline()
                except TimeoutError:
                    if self.proc.returncode is not None:
                        return await self._last_bytes()
        except (ValueError, asyncio.LimitOverrunError):
            raise TargetError(f"command printed a line longer than {LINE_LIMIT // (1024 * 1024)} MB") from None

    async def _last_bytes(self) -> bytes:
        """What an exited program left in the pipe without a final newline (b"": nothing)."""
        assert self.proc.stdout is not None
        try:
            async with asyncio.timeout(EXIT_POLL_S):
                return await self.proc.stdout.read(LINE_LIMIT)
        except TimeoutError:
            return b""

    async def _converse(self) -> tuple[dict[str, Any] | None, bytes, int]:
        """Read stdout lines until a `response` or EOF, answering `tool_call`s on the way."""
        plain = bytearray()
        exchanges = 0
        printed = 0  # every stdout byte counts against the cap: plain text, tool calls, the response
        while line := await self._readline():
            printed += len(line)
            if printed > self.max_bytes:
                raise TargetError(
                    f"command printed more than {self.max_bytes} bytes on stdout; raise max_output_bytes in omk.yaml if that is expected"
                )
            message = _protocol_message(line)
            if message is None:
                plain += line
                continue
            if message["type"] == "response":
                return message, bytes(plain), exchanges
            exchanges += 1
            tool = message.get("tool")
            if not isinstance(tool, str) or not tool:
                await self._send({"type": "tool_result", "id": message.get("id"), "output": "[omk] tool_call needs a non-empty 'tool'", "is_error": True})
                continue
            answer = await self.sandbox.answer(tool, message.get("input"))
            await self._send({"type": "tool_result", "id": message.get("id"), "output": answer.text, "is_error": answer.is_error})
            call_id = str(message.get("id") if message.get("id") is not None else f"call_{exchanges}")
            self._ids[len(self.sandbox.calls) - 1] = call_id
        return None, bytes(plain), exchanges

    def _history(self) -> list[Message]:
        """The tool exchange, for a conversation's next turn: every call the sandbox answered for
        this program, asked on stdout or over MCP, in the order it answered them."""
        messages: list[Message] = []
        for n, call in enumerate(self.sandbox.calls[self._first :], self._first):
            call_id = self._ids.get(n, f"mcp_{n + 1}")
            messages.append(assistant_message("", [(call_id, call.tool, call.input)]))
            messages.append(tool_message(call_id, call.tool, as_text(call.output), call.is_error))
        return messages

    def _trace(self, reported: dict[str, Any], exchanges: int) -> Trace:
        try:
            trace = parse_trace(reported)
        except TraceFormatError as exc:
            raise TargetError(f"command returned malformed protocol JSON: {exc}") from None
        return msgspec.structs.replace(
            trace,
            tool_calls=(*self.sandbox.calls, *trace.tool_calls),
            turns=1 + exchanges if trace.turns is None else trace.turns,
            mock_stats=self.sandbox.stats.record(),
        )

    def _from_response(self, response: dict[str, Any], exchanges: int) -> TargetResult:
        output = response.get("output")
        if not isinstance(output, str):
            raise TargetError("command returned malformed protocol JSON: response.output must be a string")
        reported = {k: response.get(k) for k in ("turns", "cost_usd", "tokens", "tool_calls")}
        return TargetResult(output=output, trace=self._trace(reported, exchanges))

    def _from_one_shot(self, stdout: bytes, exchanges: int) -> TargetResult:
        text = stdout.decode("utf-8", errors="replace").strip()
        data = None
        if text.startswith("{"):
            with contextlib.suppress(ValueError):
                data = json.loads(text)
        if isinstance(data, dict) and ("output" in data or "ok" in data):
            if data.get("ok") is False:
                raise TargetError(f"command reported failure: {data.get('error') or 'ok is false'}")
            output = data.get("output")
            if not isinstance(output, str) or not output.strip():
                raise TargetError("command completed without model output")
            reported = {k: v for k, v in data.items() if k not in ("latency_ms", "durationMs", "duration_ms", "mock_stats", "mockStats")}
            return TargetResult(output=output, trace=self._trace(reported, exchanges))
        if not text:
            raise TargetError("command completed without model output")
        return TargetResult(output=text, trace=self._trace({}, exchanges))


def _protocol_message(line: bytes) -> dict[str, Any] | None:
    """A `tool_call` or `response` line, else None (the line is plain output)."""
    stripped = line.strip()
    if not stripped.startswith(b"{"):
        return None
    try:
        message = json.loads(stripped)
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("type") in ("tool_call", "response"):
        return message
    return None
