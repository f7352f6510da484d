"""The folder one `codex:` sample (or one conversation) runs in, made fresh and removed after.

    <tmp>/omk-codex-XXXX/
        home/          HOME; home/.codex is CODEX_HOME: no config.toml, auth.json, AGENTS.md or
                       sessions of the user's; home/.codex/skills/<name>/ holds each skill; a
                       conversation's session is kept here
        work/          the CLI's working folder (`--cd`): the sample's `workspace:` folder and
                       its `environment.files_available`, copied in
        omk/           mocks.json and state.json (the hook's records), mcp-tools.json (the
                       stand-in MCP servers' tools), outside the working folder
        session-snapshot/  a conversation's home/.codex as its last successful turn left it
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import weakref
from pathlib import Path
from typing import Any

from omk.core import extras
from omk.domain.workspace import copy_workspace, snapshot
from omk.io.safe_files import copy_confined, skill_notes
from omk.samples.model import Sample
from omk.targets.base import TargetError
from omk.targets.claude import hook, mcp_stub
from omk.targets.claude.workspace import copy_available
from omk.targets.codex.setup import CodexSettings
from omk.targets.mocks import MockSandbox


def _special(folder: str, names: list[str]) -> set[str]:
    """Sockets, pipes and devices the CLI may leave in its home: not copied."""
    kept = set()
    for name in names:
        path = Path(folder, name)
        if not (path.is_symlink() or path.is_dir() or path.is_file()):
            kept.add(name)
    return kept


class CodexWorkspace:
    def __init__(self, cfg: CodexSettings, sample: Sample, conversation: bool = False):
        stubs = mcp_stub.stub_tools(sample.mocks, sample.tools)
        if stubs and not extras.installed("mcp"):
            raise TargetError(extras.missing_message("mcp", f"codex: the stand-in MCP server for the mocked {min(stubs)} tools"))
        self.root = Path(tempfile.mkdtemp(prefix="omk-codex-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.root), True)  # also at exit
        self.home = self.root / "home"
        self.work = self.root / "work"
        self.state_dir = self.root / "omk"
        self.conversation = conversation  # its session is kept on disk for the next turn to resume
        self.session_id: str | None = None  # the thread the next turn resumes, once a turn has run
        self.usage_so_far: dict[str, Any] = {}  # the thread's token totals after the last good turn
        for folder in (self.home / ".codex", self.work, self.state_dir):
            folder.mkdir(parents=True)
        skipped = []
        for skill in cfg.skills:  # what is not a regular file of the skill (a FIFO, a link out) stays out
            skipped += copy_confined(skill.path, self.home / ".codex" / "skills" / skill.name, skill.path)
        self.notes = skill_notes(skipped) + copy_workspace(sample, self.work) + copy_available(sample, self.work)
        self.baseline = snapshot(self.work)
        self._write(hook.MOCKS_FILE, {"mocks": sample.mocks, "strict": sample.mocks_strict, "base_dir": str(sample.base_dir)})
        self.mcp_servers: dict[str, list[str]] = {}  # name -> the stand-in server's command line
        if stubs:
            self._write("mcp-tools.json", stubs)
            stub = str(Path(mcp_stub.__file__).resolve())
            tools = str(self.state_dir / "mcp-tools.json")
            self.mcp_servers = {name: [sys.executable, "-I", stub, tools, name] for name in stubs}

    def _write(self, name: str, data: Any) -> None:
        (self.state_dir / name).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")

    def begin_call(self, sandbox: MockSandbox) -> None:
        """Before each call: the mock totals so far (a conversation's earlier turns), no records,
        and the session as the last successful turn left it (a retried turn starts clean)."""
        self._write(hook.STATE_FILE, {"totals": sandbox.totals.to_json(), "calls": []})
        kept = self.root / "session-snapshot"
        if kept.is_dir():
            shutil.rmtree(self.home / ".codex", ignore_errors=True)
            shutil.copytree(kept, self.home / ".codex", symlinks=True, ignore=_special)

    def keep_session(self, session_id: str | None, usage: dict[str, Any] | None) -> None:
        """After a successful turn of a conversation: the thread to resume, its token totals so
        far (Codex reports a resumed thread's totals, earlier turns included) and its files."""
        self.session_id = session_id
        self.usage_so_far = dict(usage or {})
        kept = self.root / "session-snapshot"
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(self.home / ".codex", kept, symlinks=True, ignore=_special)

    def hook_records(self) -> list[dict[str, Any]]:
        try:
            state = json.loads((self.state_dir / hook.STATE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        calls = state.get("calls") if isinstance(state, dict) else None
        return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []

    def remove(self) -> None:
        self._cleanup()
