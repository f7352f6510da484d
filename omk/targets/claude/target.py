"""`claude:MODEL`: the Claude Code CLI, with the skill installed and its tool calls mocked.

One `claude -p --output-format stream-json --verbose` process per sample (per turn for a
conversation, which continues its session with `--resume`), the composed prompt on stdin, in a
fresh workspace (omk.targets.claude.workspace). Tool calls go through omk's PreToolUse hook
(omk.targets.claude.hook), which answers them from the sample's mocks. The trace is read from
the stream (omk.targets.claude.stream). The process runs in its own process group: a timeout or
a cancelled run kills the whole group.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

import msgspec

from omk.domain.target_identity import CacheIdentity, environment, selected
from omk.llm.pricing import cost_usd
from omk.samples.model import Sample
from omk.settings.target_settings import TargetSettings
from omk.targets.agent_cli import AgentCliTarget
from omk.targets.base import TargetError, TargetResult
from omk.targets.claude import setup
from omk.targets.claude.stream import StreamRun, build_trace, history, parse_stream, tool_calls
from omk.targets.claude.workspace import Workspace
from omk.targets.mocks import MockSandbox
from omk.targets.preflight import check_reachable
from omk.targets.prelude import history_for, system_for
from omk.targets.session import Session

RETRYABLE_STATUS = {408, 409, 429}
STDERR_TAIL = 600


class ClaudeTarget(AgentCliTarget[Workspace, None]):
    kind = "claude"
    cfg: setup.ClaudeSettings

    def __init__(self, model: str, spec: str, settings: TargetSettings | None = None):
        settings = settings or TargetSettings()
        self.cfg = setup.load_settings(model, spec, settings)  # a bad block is reported before the other settings
        super().__init__(spec, settings)

    @classmethod
    def from_spec(cls, arg: str, spec: str, *, base_dir: Path | None, settings: TargetSettings) -> ClaudeTarget:
        return cls(arg.strip(), spec, settings)

    def preflight(self) -> None:
        """Before the run: the API the CLI calls accepts a connection (the CLI itself would retry
        for minutes before saying anything)."""
        url = setup.base_url()
        if url is not None:
            check_reachable(self.spec, url, "ANTHROPIC_BASE_URL")

    def describe(self) -> dict[str, Any]:
        cfg = self.cfg
        return {
            "kind": self.kind,
            "spec": self.spec,
            "model": cfg.model,
            "cli": {"path": cfg.binary, "version": cfg.version},
            "skill": cfg.skill.describe() if cfg.skill is not None else None,
            **({"skills": [s.describe() for s in cfg.skills]} if len(cfg.skills) > 1 else {}),
            "system": _digest(cfg.system) if cfg.system is not None else None,
            "max_turns": cfg.max_turns,
            "args": cfg.args,
            "mcp_config": str(cfg.mcp_config) if cfg.mcp_config else None,
            "isolation": setup.isolation(cfg),
        }

    def installed_skills(self) -> list[str]:
        """The names of the skills this run installs (what `skill_used` may name)."""
        return self.cfg.skill_names

    def cache_identity(self) -> CacheIdentity:
        """The CLI, the API it calls, the variables it gets from omk, omk.yaml's `claude:` block
        and what it installs (skills, system text, MCP config); under `user_config`, the user's
        own settings files too."""
        cfg = self.cfg
        mcp = hashlib.sha256(setup.read_mcp_config(cfg.mcp_config)[0]).hexdigest() if cfg.mcp_config is not None else None
        return CacheIdentity(
            kind=self.kind,
            model=cfg.model,
            endpoint=setup.base_url(),  # None under Bedrock or Vertex: their variables pick the endpoint
            program=self._program(cfg.binary, cfg.version),
            environment=self._key_environment(),
            settings=self._key_settings(mcp),
        )

    def _key_environment(self) -> dict[str, str]:
        """What the CLI gets from omk's environment: the variables of an isolated run (less HOME
        and CLAUDE_CONFIG_DIR, fresh per sample); under `user_config`, which passes everything,
        those and the routing and proxy variables."""
        cfg = self.cfg
        isolated = setup.child_environment(dataclasses.replace(cfg, user_config=False), Path())
        names = [n for n in isolated if n not in ("HOME", "CLAUDE_CONFIG_DIR")]
        if cfg.user_config:
            names += selected(routing=True)
        return environment(names, self.mask, setup.child_environment(cfg, Path()))

    def _key_settings(self, mcp: str | None) -> dict[str, Any]:
        cfg = self.cfg
        return {
            "skill": cfg.skill.sha256 if cfg.skill is not None else None,
            "skill_installed_as": cfg.skill.installed_as if cfg.skill is not None else None,
            **({"skills": [[s.name, s.sha256] for s in cfg.skills]} if len(cfg.skills) > 1 else {}),
            "system": cfg.system,
            "max_turns": cfg.max_turns,
            "args": cfg.args,
            "mcp_config": mcp,
            "user_config": cfg.user_config,
            "user_files": setup.user_files_digest() if cfg.user_config else None,
            "env_names": cfg.env_names,
        }

    # --- one call -----------------------------------------------------------------------------
    async def run(self, sample: Sample, prompt: str, session: Session | None = None) -> TargetResult:
        if history_for(sample):
            raise TargetError("claude: a sample with a message history cannot be sent to Claude Code (use `turns:`)")
        return await self._run_in_workspace(sample, prompt, session)

    def _new_workspace(self, sample: Sample, session: Session | None) -> Workspace:
        return Workspace(self.cfg, sample)

    def _later_turn(self, space: Workspace | None, session: Session) -> Workspace | None:
        return space  # a turn whose folder is gone starts a fresh one

    async def _call(self, sample: Sample, space: Workspace, prompt: str) -> tuple[bytes, bytes, int]:
        return await self._execute(self._argv(sample, space), space, prompt)

    def _result_of(self, stdout: bytes, stderr: bytes, code: int, records: list[dict[str, Any]], sandbox: MockSandbox,
                   space: Workspace) -> tuple[TargetResult, None]:
        return self._result(parse_stream(stdout), records, code, stderr, sandbox), None

    def _first_notes(self, sample: Sample, space: Workspace) -> tuple[str, ...]:
        return tuple(space.notes)

    def _keep_session(self, space: Workspace, session: Session | None, result: TargetResult, kept: None) -> None:
        if session is not None:
            space.keep_session(result.trace.session_id)

    def _argv(self, sample: Sample, space: Workspace) -> list[str]:
        cfg = self.cfg
        argv = [cfg.binary, "-p", "--output-format", "stream-json", "--verbose"]
        argv += ["--max-turns", str(cfg.max_turns), "--settings", str(space.settings_file)]
        if cfg.model:
            argv += ["--model", cfg.model]
        system = system_for(cfg.system, sample)
        if system:
            argv += ["--append-system-prompt", system]
        if not cfg.user_config:
            argv += ["--setting-sources", "project,local", "--strict-mcp-config"]
        if space.mcp_config is not None:
            argv += ["--mcp-config", str(space.mcp_config)]
        if space.session_id:
            argv += ["--resume", space.session_id]
        return argv + cfg.args

    async def _execute(self, argv: list[str], space: Workspace, prompt: str) -> tuple[bytes, bytes, int]:
        env = setup.child_environment(self.cfg, space.home)
        return await setup.CLI.run(argv, space.work, env, prompt, self.max_output_bytes)

    def _result(self, run: StreamRun, records: list[dict[str, Any]], code: int, stderr: bytes, sandbox: MockSandbox) -> TargetResult:
        if run.result is None:
            detail = _tail(stderr) or "no result line on stdout"
            raise TargetError(f"claude exited with code {code}: {detail}" if code else f"claude gave no result: {detail}")
        calls = tool_calls(run, records)
        notes: list[str] = []
        output = run.result.get("result")
        if run.result.get("subtype") == "error_max_turns":
            output = run.last_text()
            pending = len(run.steps[-1][1]) if run.steps else 0
            notes.append(
                f"stopped at max_turns ({self.cfg.max_turns}): the model still asked for {pending} tool call(s); "
                "the output is its last text"
            )
        elif run.result.get("is_error") or code != 0:
            raise _failure(run.result, code, stderr)
        if not isinstance(output, str):
            raise TargetError("claude: the result line has no text `result`")
        listed = run.init.get("skills")
        for skill in self.cfg.skills:
            if skill.is_dir and isinstance(listed, list) and skill.name not in listed:
                notes.append(f"Claude Code did not list the installed skill {skill.name!r}; check its SKILL.md")
        trace = build_trace(run, calls, sandbox.stats.record(), notes)
        if trace.cost_usd is None and trace.tokens is not None:  # the CLI reported no cost: omk's price of the model
            trace = msgspec.structs.replace(trace, cost_usd=cost_usd(self.cfg.price, trace.tokens.input, trace.tokens.output))
        return TargetResult(output=output, trace=trace, messages=history(run, calls, output))



def _failure(result: dict[str, Any], code: int, stderr: bytes) -> TargetError:
    """The CLI's own message: the result text (`API Error: 400 …`), else its `errors`."""
    message = result.get("result") if isinstance(result.get("result"), str) and result.get("result") else None
    errors = result.get("errors")
    if message is None and isinstance(errors, list) and errors:
        message = "; ".join(str(e) for e in errors)
    message = message or _tail(stderr) or f"{result.get('subtype') or 'error'} (exit code {code})"
    if "not logged in" in message.lower():
        return TargetError(f"claude: {setup.NO_KEY}", retryable=False)
    status = result.get("api_error_status")
    if "connection error" in message.lower() or "econnrefused" in message.lower():
        return TargetError(f"claude: connection refused: {setup.base_url()} ({message})", retryable=True)
    retryable = isinstance(status, int) and (status in RETRYABLE_STATUS or status >= 500)
    return TargetError(f"claude: {message}", retryable=retryable)


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return text[-STDERR_TAIL:]


def _digest(text: str) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()[:16], "chars": len(text)}
