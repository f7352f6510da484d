"""`codex:MODEL`: the Codex CLI, with the skills installed and its tool calls mocked.

One `codex exec --json` process per sample (per turn for a conversation, whose later turns run
`codex exec … resume THREAD_ID`), the composed prompt on stdin, in a fresh workspace
(omk.targets.codex.workspace) with its own HOME and CODEX_HOME and `--ignore-user-config`. The
model is reached through a provider omk defines on the command line (`OPENAI_BASE_URL`,
`OPENAI_API_KEY`, the Responses API over HTTP). Tool calls go through omk's PreToolUse hook
(omk.targets.codex.hook), which answers them from the sample's mocks. The trace is read from the
JSON events (omk.targets.codex.stream). The process runs in its own process group: a timeout or a
cancelled run kills the whole group.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path
from typing import Any

import msgspec

from omk.domain.messages import assistant_message, tool_message
from omk.domain.target_identity import CacheIdentity, environment
from omk.samples.model import Sample
from omk.settings.target_settings import TargetSettings
from omk.targets.agent_cli import AgentCliTarget
from omk.targets.base import TargetError, TargetResult
from omk.targets.codex import config, hook, setup
from omk.targets.codex.stream import CodexRun, build_trace, parse_events, tool_calls, unsupported_calls
from omk.targets.codex.workspace import CodexWorkspace
from omk.targets.mocks import MockSandbox, as_text
from omk.targets.preflight import check_reachable
from omk.targets.prelude import history_for, system_for
from omk.targets.session import Session

HOOK_TIMEOUT_S = 30
STDERR_TAIL = 600
RETRYABLE = ("429", "500", "502", "503", "504", "rate limit", "overloaded")


class CodexTarget(AgentCliTarget[CodexWorkspace, CodexRun]):
    kind = "codex"
    cfg: setup.CodexSettings

    def __init__(self, model: str, spec: str, settings: TargetSettings | None = None):
        settings = settings or TargetSettings()
        self.cfg = setup.load_settings(model, spec, settings)  # a bad block is reported before the other settings
        super().__init__(spec, settings)

    @classmethod
    def from_spec(cls, arg: str, spec: str, *, base_dir: Path | None, settings: TargetSettings) -> CodexTarget:
        return cls(arg.strip(), spec, settings)

    def preflight(self) -> None:
        """Before the run: the API the CLI calls accepts a connection (the CLI itself reconnects
        for minutes before giving up)."""
        check_reachable(self.spec, setup.base_url(), "OPENAI_BASE_URL")

    def describe(self) -> dict[str, Any]:
        cfg = self.cfg
        return {
            "kind": self.kind,
            "spec": self.spec,
            "model": cfg.model,
            "cli": {"path": cfg.binary, "version": cfg.version},
            "skills": [s.describe() for s in cfg.skills],
            "system": setup.digest(cfg.system) if cfg.system is not None else None,
            "args": cfg.args,
            "self_answered_tools": {"available": sorted(setup.SELF_ANSWERED), "under_mocks_strict": "switched off"},
            "isolation": setup.isolation(cfg),
        }

    def installed_skills(self) -> list[str]:
        return self.cfg.skill_names

    def cache_identity(self) -> CacheIdentity:
        """The CLI, the Responses API it calls, the variables it gets from omk (less HOME and
        CODEX_HOME, fresh per sample), omk.yaml's `codex:` block and the skills and system text."""
        cfg = self.cfg
        passed = setup.child_environment(cfg, Path())
        return CacheIdentity(
            kind=self.kind,
            model=cfg.model,
            endpoint=setup.base_url(),
            program=self._program(cfg.binary, cfg.version),
            environment=environment([n for n in passed if n not in ("HOME", "CODEX_HOME")], self.mask, passed),
            settings={
                "skills": [[s.name, s.sha256] for s in cfg.skills],
                "system": cfg.system,
                "args": cfg.args,
                "env_names": cfg.env_names,
            },
        )

    async def run(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult:
        if history_for(sample):
            raise TargetError("codex: a sample with a message history cannot be sent to Codex (use `turns:`)", retryable=False)
        return await self._run_in_workspace(sample, prompt, session)

    def _new_workspace(self, sample: Sample, session: Session | None) -> CodexWorkspace:
        if session is None:
            return CodexWorkspace(self.cfg, sample)
        return CodexWorkspace(self.cfg, sample, conversation=session.count > 1)

    def _later_turn(self, space: CodexWorkspace | None, session: Session) -> CodexWorkspace | None:
        if space is None or space.session_id is None:
            raise TargetError(f"codex: turn {session.index + 1} cannot resume: no session (thread id) from the turn before",
                              retryable=False)
        return space

    async def _call(self, sample: Sample, space: CodexWorkspace, prompt: str) -> tuple[bytes, bytes, int]:
        return await self._execute(self.argv(sample, space), space, prompt)

    def _result_of(self, stdout: bytes, stderr: bytes, code: int, records: list[dict[str, Any]], sandbox: MockSandbox,
                   space: CodexWorkspace) -> tuple[TargetResult, CodexRun]:
        run = parse_events(stdout)
        result = self._result(run, records, code, stderr, sandbox, space.usage_so_far)
        if refused := unsupported_calls(_rollout(space.home / ".codex", run.thread_id)):
            result.trace = msgspec.structs.replace(result.trace, tool_calls=(*result.trace.tool_calls, *refused))
        return result, run

    def _first_notes(self, sample: Sample, space: CodexWorkspace) -> tuple[str, ...]:
        return (*space.notes, *self._strict_note(sample))

    def _keep_session(self, space: CodexWorkspace, session: Session | None, result: TargetResult, kept: CodexRun) -> None:
        if session is not None and session.index != session.count - 1:  # a later turn resumes from here
            space.keep_session(kept.thread_id, kept.usage)

    def argv(self, sample: Sample, space: CodexWorkspace) -> list[str]:
        """The command line. Every setting omk makes is data in one table (`settings`), written as
        `-c` overrides by a TOML writer (omk.targets.codex.config), never spliced in as text."""
        try:
            table = config.overrides(self.settings(sample, space))
        except ValueError as exc:  # a sample built in code, which no loader checked
            raise TargetError(str(exc), retryable=False) from None
        # No `--ephemeral`: the session file, in the sample's own CODEX_HOME (removed with it), is
        # where a later turn resumes from and the one record of a call Codex does not support.
        argv = [self.cfg.binary, "exec", "--json", "--skip-git-repo-check", "--ignore-user-config", "--ignore-rules",
                "--sandbox", "workspace-write", "--cd", str(space.work),
                "--dangerously-bypass-hook-trust",  # the one hook is omk's own, written just now
                *table]
        if sample.mocks_strict:
            for feature in setup.SELF_ANSWERED_FEATURES:
                argv += ["--disable", feature]
        resume = ["resume", _session_id(space.session_id)] if space.session_id else []  # exec's own flags stay before it
        return argv + self.cfg.args + resume + ["-"]

    def settings(self, sample: Sample, space: CodexWorkspace) -> dict[str, Any]:
        """What omk sets in Codex's configuration for one call, as a table of dotted paths."""
        hook_command = shlex.join([sys.executable, "-I", str(Path(hook.__file__).resolve()), str(space.state_dir)])
        table: dict[str, Any] = {
            "model_provider": "omk",
            "model_providers.omk": {"name": "omk", "base_url": setup.base_url(), "env_key": "OPENAI_API_KEY",
                                    "wire_api": "responses", "supports_websockets": False},
            "hooks.PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": hook_command, "timeout": HOOK_TIMEOUT_S}]}],
            "analytics.enabled": False,
            "check_for_update_on_startup": False,
        }
        if self.cfg.model:
            table["model"] = self.cfg.model
        system = system_for(self.cfg.system, sample)
        if system:
            table["developer_instructions"] = system
        for name, command in space.mcp_servers.items():  # stand-ins for the MCP servers whose tools the mocks name
            table[f"mcp_servers.{config.key(name)}"] = {"command": command[0], "args": command[1:], "required": True}
        if sample.mocks_strict:
            table["web_search"] = "disabled"
        return table

    def _strict_note(self, sample: Sample) -> list[str]:
        if not sample.mocks_strict:
            return []
        return [f"mocksStrict: switched off the tools Codex answers itself: {', '.join(sorted(setup.SELF_ANSWERED))}"]

    async def _execute(self, argv: list[str], space: CodexWorkspace, prompt: str) -> tuple[bytes, bytes, int]:
        env = setup.child_environment(self.cfg, space.home)
        return await setup.CLI.run(argv, space.work, env, prompt, self.max_output_bytes)

    def _result(self, run: CodexRun, records: list[dict[str, Any]], code: int, stderr: bytes, sandbox: MockSandbox,
                before: dict[str, Any]) -> TargetResult:
        if run.failure is not None or run.output is None or code != 0:
            raise _failure(run, code, stderr)
        calls = tool_calls(run, records)
        trace = build_trace(run, calls, self.cfg.price, before, sandbox.stats.record())
        messages = []
        if calls:
            messages.append(assistant_message("", [(f"call_{i}", c.tool, c.input) for i, c in enumerate(calls)]))
            messages += [tool_message(f"call_{i}", c.tool, as_text(c.output), c.is_error) for i, c in enumerate(calls)]
        messages.append(assistant_message(run.output or ""))
        return TargetResult(output=run.output or "", trace=trace, messages=messages)



def _rollout(codex_home: Path, thread_id: str | None) -> bytes:
    """The session file Codex wrote for `thread_id` under `codex_home/sessions` (b"" if none)."""
    if not thread_id:
        return b""
    for path in sorted((codex_home / "sessions").rglob(f"rollout-*{thread_id}*.jsonl")):
        try:
            return path.read_bytes()
        except OSError:
            return b""
    return b""


def _failure(run: CodexRun, code: int, stderr: bytes) -> TargetError:
    message = run.failure or (run.errors[-1] if run.errors else None) or _tail(stderr) or f"no answer (exit code {code})"
    lowered = message.lower()
    if "401" in lowered or "unauthorized" in lowered:
        return TargetError(f"codex: {setup.NO_KEY} ({message})", retryable=False)
    if "connection refused" in lowered or "error sending request" in lowered or "connection failed" in lowered:
        return TargetError(f"codex: connection refused: {setup.base_url()} ({message})", retryable=True)
    return TargetError(f"codex: {message}", retryable=any(mark in lowered for mark in RETRYABLE))


def _session_id(thread: str) -> str:
    """The thread id Codex reported, as the `resume` argument: never something the CLI would
    read as a flag."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}", thread):
        raise TargetError(f"codex: cannot resume thread {thread[:80]!r}: not a thread id", retryable=False)
    return thread


def _tail(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").strip()[-STDERR_TAIL:]

