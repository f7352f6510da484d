"""What the agent CLI targets (`claude:`, `codex:`) share: finding the CLI, reading their
omk.yaml block, and the flow of one call (a workspace per sample or conversation, the CLI run
in it, the hook records, the files it changed)."""

from __future__ import annotations

import os
import shutil
import time
import weakref
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from omk.core.errors import ConfigError
from omk.core.secrets import Masker
from omk.domain.target_result import TargetResult
from omk.domain.workspace import Snapshot, WorkFolder, checks_workspace, diff, snapshot, unread_notes
from omk.io.process import max_output_bytes
from omk.records import ToolCall
from omk.samples.model import Sample
from omk.settings.target_settings import TargetSettings
from omk.targets.mocks import MockSandbox
from omk.targets.session import Session


class AgentCli(msgspec.Struct, frozen=True, gc=False):
    """One agent CLI: its program name, the variable and omk.yaml key that point at it, how a
    person installs it."""

    program: str  # "claude"
    product: str  # "Claude Code"
    env_var: str  # "OMK_CLAUDE"
    install_hint: str  # "npm install -g @anthropic-ai/claude-code"

    def find(self, block: dict[str, Any], spec: str) -> str:
        """`OMK_…`, then omk.yaml `<program>.path`, then the program on PATH."""
        key = f"{self.program}.path"
        for where, candidate in ((self.env_var, os.environ.get(self.env_var)), (key, block.get("path"))):
            if not candidate:
                continue
            found = shutil.which(str(candidate)) or (str(candidate) if Path(candidate).is_file() else None)
            if found is None or not os.access(found, os.X_OK):
                raise ConfigError(
                    f"target {spec!r}: {where} names {candidate}, which is not an executable file; "
                    f"install {self.product} with `{self.install_hint}`"
                )
            return found
        found = shutil.which(self.program)
        if found is None:
            raise ConfigError(
                f"target {spec!r}: the {self.product} CLI (`{self.program}`) was not found on PATH; install it with "
                f"`{self.install_hint}`, or set {self.env_var} or `{self.program}: {{path: …}}` in omk.yaml"
            )
        return found

    async def run(self, argv: list[str], cwd: Path, env: dict[str, str], prompt: str, max_bytes: int) -> tuple[bytes, bytes, int]:
        """Run the CLI once in its own process group (a kill takes its hooks and tools too), the
        prompt on stdin: (stdout within `max_bytes`, the tail of stderr, the exit code)."""
        from omk.io.process import OutputTooLarge, communicate, start_program, stop_program
        from omk.targets.base import TargetError

        try:
            proc = await start_program(argv, cwd=cwd, env=env)
        except OSError as exc:
            raise TargetError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
        try:
            stdout, stderr = await communicate(proc, prompt.encode("utf-8"), max_bytes)
        except OutputTooLarge as exc:
            raise TargetError(f"{self.program}: {exc}") from None
        finally:
            await stop_program(proc)
        return stdout, stderr, proc.returncode if proc.returncode is not None else -1

    def string_list(self, block: dict[str, Any], key: str) -> list[str]:
        """omk.yaml `<program>.<key>` as a list of strings (none when unset)."""
        value = block.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"omk.yaml {self.program}.{key}: must be a list of strings")
        return list(value)


def settings_block(block: dict[str, Any] | None, name: str, keys: frozenset[str] | set[str]) -> dict[str, Any]:
    """omk.yaml's `<name>:` block (`TargetSettings.claude`…; empty when unset), a mapping of known keys."""
    block = block or {}
    if not isinstance(block, dict):
        raise ConfigError(f"omk.yaml {name}: must be a mapping")
    unknown = sorted(set(block) - keys)
    if unknown:
        raise ConfigError(f"omk.yaml {name}.{unknown[0]}: unknown setting; expected one of {', '.join(sorted(keys))}")
    return block


def recorded_call(record: dict[str, Any]) -> ToolCall:
    """One tool call as omk's PreToolUse hook wrote it down."""
    decision = record.get("decision")
    return ToolCall(
        tool=str(record.get("tool")),
        input=record.get("input"),
        output=record.get("output"),
        mocked=decision == "mock",
        mock_key=record.get("mock_key") if decision in ("mock", "allow") else None,  # allow: a `run: true` mock
        is_error=decision == "deny",
        outcome="mock" if decision == "mock" else "denied" if decision == "deny" else "ran",
    )


class CliWorkspace(Protocol):
    """The folder one agent CLI works in: what the shared flow of a call uses of it."""

    work: Path
    baseline: Snapshot
    notes: list[str]

    def begin_call(self, sandbox: MockSandbox) -> None: ...

    def hook_records(self) -> list[dict[str, Any]]: ...

    def remove(self) -> None: ...


class CliSettings(Protocol):
    """What the shared flow reads of a CLI's settings (omk.yaml's block for it, checked)."""

    @property
    def model(self) -> str | None: ...

    @property
    def price(self) -> tuple[float, float] | None: ...


Space = TypeVar("Space", bound=CliWorkspace)
Kept = TypeVar("Kept")  # what one call hands on for keeping the session (a parsed run, or nothing)


class AgentCliTarget(Generic[Space, Kept]):
    """The flow of one call of an agent CLI target; each CLI fills in its own steps below."""

    cfg: CliSettings  # each CLI's own settings, loaded before this __init__ runs

    def __init__(self, spec: str, settings: TargetSettings) -> None:
        self.spec = spec
        self.max_output_bytes = max_output_bytes(settings)  # the CLI's stream-json on stdout, capped like a cmd: target's
        self.mask = Masker.for_run(settings)  # the start of each file the agent wrote, as the report keeps it
        # A conversation's workspace lives from its first turn to its last; the key is the
        # conversation's mock sandbox, the one object every turn's Session shares.
        self._conversations: weakref.WeakKeyDictionary[MockSandbox, Space] = weakref.WeakKeyDictionary()

    @property
    def model(self) -> str | None:
        return self.cfg.model

    @property
    def price(self) -> tuple[float, float] | None:
        """USD per 1M tokens (input, output): omk.yaml's `<cli>.price`, else omk's table."""
        return self.cfg.price

    async def _run_in_workspace(self, sample: Sample, prompt: str, session: Session | None) -> TargetResult:
        sandbox = session.sandbox if session is not None else MockSandbox.for_sample(sample)
        space = self._workspace(sample, sandbox, session)
        finished = handed = False
        try:
            space.begin_call(sandbox)
            started = time.perf_counter()
            stdout, stderr, code = await self._call(sample, space, prompt)
            records = space.hook_records()
            for one in records:
                sandbox.record(recorded_call(one))
            result, kept = self._result_of(stdout, stderr, code, records, sandbox, space)
            after = snapshot(space.work)
            changes = diff(space.baseline, after, space.work, self.mask)
            latency_ms = round((time.perf_counter() - started) * 1000, 1)
            head = self._first_notes(sample, space) if session is None or session.index == 0 else ()
            notes = (*head, *result.trace.notes, *unread_notes(after))
            result.trace = msgspec.structs.replace(result.trace, latency_ms=latency_ms, notes=notes, workspace=changes)
            self._keep_session(space, session, result, kept)
            finished = session is None or session.index == session.count - 1
            if finished and checks_workspace(sample):  # the folder stays for those checks; the run engine removes it
                result.workspace, handed = WorkFolder(space.work, changes, space.remove), True
            return result
        finally:
            if session is None or finished:
                self._conversations.pop(sandbox, None)
                if not handed:
                    space.remove()

    def _workspace(self, sample: Sample, sandbox: MockSandbox, session: Session | None) -> Space:
        """A fresh folder per sample; a conversation's turns share one, kept from its first turn
        to its last."""
        if session is None:
            return self._new_workspace(sample, None)
        space = self._conversations.get(sandbox)
        if session.index > 0:
            carried = self._later_turn(space, session)
            if carried is not None:
                return carried
        if space is not None:
            space.remove()
        space = self._conversations[sandbox] = self._new_workspace(sample, session)
        return space

    def _new_workspace(self, sample: Sample, session: Session | None) -> Space:
        raise NotImplementedError

    def _program(self, binary: str, version: str) -> dict[str, Any]:
        """The CLI that answers, for the cache key: its resolved path, its version (asked once
        per run), and a digest of omk's own code that writes its settings, hooks and flags."""
        import sys

        from omk.domain.target_identity import source_digest

        own = Path(str(sys.modules[type(self).__module__].__file__)).parent
        files = [str(p) for p in own.glob("*.py")] + [__file__]
        return {"path": os.path.realpath(binary), "version": version, "omk": source_digest(files)}

    def _later_turn(self, space: Space | None, session: Session) -> Space | None:
        """The folder a later turn goes on in (None: a fresh one), or an error when it cannot."""
        raise NotImplementedError

    async def _call(self, sample: Sample, space: Space, prompt: str) -> tuple[bytes, bytes, int]:
        """Run the CLI once: (stdout, the tail of stderr, the exit code)."""
        raise NotImplementedError

    def _result_of(self, stdout: bytes, stderr: bytes, code: int, records: list[dict[str, Any]], sandbox: MockSandbox,
                   space: Space) -> tuple[TargetResult, Kept]:
        """The result of one call, and what keeping the session needs of it."""
        raise NotImplementedError

    def _first_notes(self, sample: Sample, space: Space) -> tuple[str, ...]:
        """The notes that open the first turn's trace."""
        raise NotImplementedError

    def _keep_session(self, space: Space, session: Session | None, result: TargetResult, kept: Kept) -> None:
        """After a successful call: keep what the next turn resumes from."""
        raise NotImplementedError

    async def close(self) -> None:
        for space in list(self._conversations.values()):
            space.remove()
        self._conversations.clear()
