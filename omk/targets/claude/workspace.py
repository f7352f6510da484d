"""The folder one `claude:` sample (or one conversation) runs in, made fresh and removed after.

    <tmp>/omk-claude-XXXX/
        home/          HOME and CLAUDE_CONFIG_DIR (home/.claude): empty, so no user settings,
                       skills, CLAUDE.md or sessions; a conversation's session is kept here
        work/          the CLI's working folder: the sample's `workspace:` folder, then
                       .claude/skills/<name>/ (each skill under test) and the sample's
                       `environment.files_available`, copied in
        omk/           settings.json (the PreToolUse hook), mocks.json, state.json (the hook's
                       records), mcp.json (the mock MCP servers), outside the working folder
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import tempfile
import weakref
from pathlib import Path
from typing import Any

from omk.core import extras
from omk.domain.workspace import copy_workspace, snapshot
from omk.io.safe_files import copy_confined, sample_path, skill_notes, special_reason
from omk.samples.model import Sample
from omk.targets.base import TargetError
from omk.targets.claude import hook, mcp_stub
from omk.targets.claude.setup import ClaudeSettings, read_mcp_config
from omk.targets.mocks import MockSandbox

HOOK_TIMEOUT_S = 30


def source_folder(sample: Sample) -> Path:
    """Where `files_available` are read: the sample's `cwd` (relative to the samples file), else
    the samples file's folder. The loader has checked it is inside the project (omk.io.safe_files)."""
    return sample_path(sample.cwd, sample.base_dir) if sample.cwd else sample.base_dir


def _mcp_servers(cfg: ClaudeSettings, sample: Sample) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The user's servers (claude.mcp_config) and the tools of a stand-in server for every other
    server whose tools the mocks name. The stand-in runs on the MCP SDK (the omk[mcp] extra)."""
    servers: dict[str, Any] = {}
    if cfg.mcp_config is not None:
        servers = dict(read_mcp_config(cfg.mcp_config)[1])
    stubs = {name: tools for name, tools in mcp_stub.stub_tools(sample.mocks, sample.tools).items() if name not in servers}
    if stubs and not extras.installed("mcp"):
        raise TargetError(extras.missing_message("mcp", f"claude: the stand-in MCP server for the mocked {min(stubs)} tools"))
    return servers, stubs


def copy_available(sample: Sample, work: Path) -> list[str]:
    """Copy the sample's `environment.files_available` into `work`; notes on what was skipped."""
    source = source_folder(sample).resolve()
    if (why := special_reason(source)) is not None:  # a sample built in code, not loaded: `cwd: /proc/self`
        return [f"files_available: not copied: {why}"]
    notes = []
    for entry in (sample.environment or {}).get("files_available") or []:
        name = str(entry).strip()
        relative = Path(name)
        origin = source / relative
        if not name or relative.is_absolute() or not origin.resolve().is_relative_to(source):
            notes.append(f"files_available: {name!r} is outside {source}; not copied")
        elif not _exists(origin):
            notes.append(f"files_available: {name!r} not found in {source}; not copied")
        else:  # only regular files and folders that stay inside the source folder
            skipped = copy_confined(origin, work / relative, source)
            notes += [f"files_available: {s!r} leads outside {source} or is not a regular file; not copied" for s in skipped]
    return notes


def _exists(path: Path) -> bool:
    """Whether `path` is there; False for a name the system refuses (too long)."""
    try:
        return path.exists()
    except OSError:
        return False


class Workspace:
    def __init__(self, cfg: ClaudeSettings, sample: Sample):
        servers, stubs = _mcp_servers(cfg, sample)  # checked first: nothing to clean up when it fails
        self.root = Path(tempfile.mkdtemp(prefix="omk-claude-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.root), True)  # also at exit
        self.home = self.root / "home"
        self.work = self.root / "work"
        self.state_dir = self.root / "omk"
        for folder in (self.home / ".claude", self.work, self.state_dir):
            folder.mkdir(parents=True)
        self.session_id: str | None = None  # set after the first turn of a conversation
        self.notes = copy_workspace(sample, self.work) + self._materialise(cfg, sample)
        self.baseline = snapshot(self.work)  # what the agent starts from: its changes are against this
        self._write_config(sample)
        self.mcp_config = self._write_mcp(servers, stubs)

    # --- set-up -------------------------------------------------------------------------------
    def _materialise(self, cfg: ClaudeSettings, sample: Sample) -> list[str]:
        """Install the skill folder; copy the declared files. Returns notes on what was skipped."""
        skipped = []
        for skill in cfg.skills:  # every skill folder of the run, side by side; what is not a
            if skill.is_dir:  # regular file of the skill (a FIFO, a link out of it) stays out
                skipped += copy_confined(skill.path, self.work / ".claude" / "skills" / skill.name, skill.path)
        return skill_notes(skipped) + copy_available(sample, self.work)

    def _write_config(self, sample: Sample) -> None:
        command = shlex.join([sys.executable, "-I", str(Path(hook.__file__).resolve()), str(self.state_dir)])
        settings = {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]}
                ]
            }
        }
        self._write("settings.json", settings)
        self._write(hook.MOCKS_FILE, {"mocks": sample.mocks, "strict": sample.mocks_strict, "base_dir": str(sample.base_dir)})

    def _write_mcp(self, servers: dict[str, Any], stubs: dict[str, list[dict[str, Any]]]) -> Path | None:
        """One MCP config for the CLI (see _mcp_servers). None when there are no servers."""
        if not servers and not stubs:
            return None
        self._write("mcp-tools.json", stubs)
        stub = str(Path(mcp_stub.__file__).resolve())
        for name in stubs:
            servers[name] = {"command": sys.executable, "args": ["-I", stub, str(self.state_dir / "mcp-tools.json"), name]}
        self._write("mcp.json", {"mcpServers": servers})
        return self.state_dir / "mcp.json"

    def _write(self, name: str, data: Any) -> None:
        (self.state_dir / name).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")

    @property
    def settings_file(self) -> Path:
        return self.state_dir / "settings.json"

    # --- per call -----------------------------------------------------------------------------
    def begin_call(self, sandbox: MockSandbox) -> None:
        """Before each call: the mock totals so far (a conversation's earlier turns), no records,
        and the session as the last successful turn left it (a retried turn starts clean)."""
        self._write(hook.STATE_FILE, {"totals": sandbox.totals.to_json(), "calls": []})
        snapshot = self.root / "sessions-snapshot"
        if snapshot.is_dir():
            shutil.rmtree(self.home / ".claude", ignore_errors=True)
            shutil.copytree(snapshot, self.home / ".claude", symlinks=True)

    def hook_records(self) -> list[dict[str, Any]]:
        try:
            state = json.loads((self.state_dir / hook.STATE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        calls = state.get("calls") if isinstance(state, dict) else None
        return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []

    def keep_session(self, session_id: str | None) -> None:
        """After a successful turn of a conversation: remember the session and its files."""
        self.session_id = session_id
        snapshot = self.root / "sessions-snapshot"
        shutil.rmtree(snapshot, ignore_errors=True)
        shutil.copytree(self.home / ".claude", snapshot, symlinks=True)

    def remove(self) -> None:
        self._cleanup()
