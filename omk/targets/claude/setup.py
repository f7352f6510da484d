"""What a `claude:` run is set up from: the CLI binary, omk.yaml's `claude:` block, the skill.

Everything here is decided once per run, before any sample: a missing binary or a bad setting
stops the run with exit 2 before work starts.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omk.core.errors import ConfigError
from omk.domain.skillset import SkillPath, configured_skills
from omk.io.safe_files import file_sha256, read_text_file, regular_files
from omk.llm.pricing import cli_price, price_setting
from omk.settings.target_settings import TargetSettings
from omk.targets.agent_cli import AgentCli, settings_block
from omk.targets.agent_loop import DEFAULT_MAX_TURNS, max_turns

INSTALL_HINT = "npm install -g @anthropic-ai/claude-code"
CLI = AgentCli("claude", "Claude Code", "OMK_CLAUDE", INSTALL_HINT)
BLOCK_KEYS = {"path", "args", "env", "price", "mcp_config", "user_config"}

# Variables the isolated CLI still gets from omk's environment: how to reach the model and the
# network, and the locale. Everything else (the user's CLAUDE_* toggles, XDG folders…) stays out.
PASSED_VARIABLES = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TMPDIR",
    "TERM",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
)
PASSED_PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_USE_", "AWS_", "GOOGLE_", "CLOUD_ML_", "VERTEX_")
# Set for every run: no telemetry, error reports or update checks; nothing but the model calls.
FIXED_VARIABLES = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}


@dataclass(slots=True)
class Skill:
    """The artifact under test. A directory (with SKILL.md) is installed in the run's
    `.claude/skills/<name>/`; a file's text goes through `--append-system-prompt`."""

    path: Path
    name: str
    is_dir: bool
    sha256: str  # of the directory's files (names and bytes) or the file's bytes

    def describe(self) -> dict[str, Any]:
        return {"path": str(self.path), "name": self.name, "installed_as": self.installed_as, "sha256": self.sha256[:16]}

    @property
    def installed_as(self) -> str:
        return f".claude/skills/{self.name}/" if self.is_dir else "--append-system-prompt"


@dataclass(slots=True)
class ClaudeSettings:
    binary: str
    version: str
    model: str | None
    price: tuple[float, float] | None = None  # omk.yaml `claude.price`, else omk's table (omk/llm/pricing.py)
    skills: list[Skill] = field(default_factory=list)  # every skill folder installed together, or one skill file
    system: str | None = None  # text for --append-system-prompt (`system:`, or a skill file's text)
    max_turns: int = DEFAULT_MAX_TURNS
    args: list[str] = field(default_factory=list)  # extra flags, after omk's own
    env_names: list[str] = field(default_factory=list)  # more variables passed through by name
    mcp_config: Path | None = None  # the user's MCP servers, only when omk.yaml names them
    user_config: bool = False  # true: the user's own HOME and ~/.claude (no isolation)

    @property
    def skill(self) -> Skill | None:
        """The skill under test when there is exactly one."""
        return self.skills[0] if len(self.skills) == 1 else None

    @property
    def skill_names(self) -> list[str]:
        return [s.name for s in self.skills]


def find_binary(block: dict[str, Any], spec: str) -> str:
    """`OMK_CLAUDE`, then omk.yaml `claude.path`, then `claude` on PATH."""
    return CLI.find(block, spec)


# What lets the CLI reach a model without the user's login (docs/targets.md): a key, a bearer
# token, or the switch to Bedrock or Vertex (whose cloud credentials the CLI then reads).
CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX")
NO_KEY = "no API key: set ANTHROPIC_API_KEY (omk runs the CLI without your login)"


def check_credentials(spec: str, block: dict[str, Any]) -> None:
    """The isolated CLI has no login of its own: without one of `CREDENTIALS` every sample would
    fail with "Not logged in"."""
    from omk.io.process import key_missing

    if any(os.environ.get(name, "").strip() not in ("", "0", "false") for name in CREDENTIALS):
        return
    message = (
        f"target {spec!r}: {NO_KEY}; or ANTHROPIC_AUTH_TOKEN, or CLAUDE_CODE_USE_BEDROCK=1 / CLAUDE_CODE_USE_VERTEX=1 "
        "with their cloud credentials, or `claude: {user_config: true}` in omk.yaml to use your own login"
    )
    if not key_missing(message):
        raise ConfigError(message)


def base_url() -> str | None:
    """The API the CLI will call, or None under Bedrock or Vertex (reached through their SDKs)."""
    if any(os.environ.get(f"CLAUDE_CODE_USE_{cloud}", "").strip() not in ("", "0", "false") for cloud in ("BEDROCK", "VERTEX")):
        return None
    return os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"


NOT_RUN = "not checked (dry run)"


def cli_version(binary: str, spec: str) -> str:
    """`2.1.331` from `claude --version`; the cache key carries it, so an upgrade re-runs. A dry
    run starts no program: the version is then NOT_RUN (omk.io.process.may_start)."""
    from omk.io.process import may_start

    if not may_start(f"the {spec.partition(':')[0]} CLI's version ({binary} --version)"):
        return NOT_RUN
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"target {spec!r}: cannot run {binary} --version: {exc}") from None
    text = (done.stdout or "").strip()
    if done.returncode != 0 or not text:
        detail = (done.stderr or text or "no output").strip().splitlines()[-1:] or ["no output"]
        raise ConfigError(f"target {spec!r}: {binary} --version failed: {detail[0]}")
    match = re.search(r"\d+\.\d+\.\d+\S*", text)
    return match.group(0) if match else text.splitlines()[0]


def tree_sha256(root: Path) -> str:
    """A hash of every file under `root`: relative names and contents, in a stable order."""
    digest = hashlib.sha256()
    for path in regular_files(root):  # never a FIFO or a link out; each file read in pieces
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        digest.update(bytes.fromhex(_file_sha256(path)))
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    try:
        return file_sha256(path)
    except OSError as exc:
        raise ConfigError(f"omk.yaml skill: cannot read {path}: {exc.strerror or exc}") from None


def _skill(found: SkillPath) -> Skill:
    digest = tree_sha256(found.path) if found.is_dir else _file_sha256(found.path)
    return Skill(path=found.path, name=found.name, is_dir=found.is_dir, sha256=digest)


def read_skill(value: Any) -> Skill:
    path = Path(str(value))
    if path.is_dir():
        if not (path / "SKILL.md").is_file():
            raise ConfigError(f"omk.yaml skill: {path} is a folder without a SKILL.md")
        return Skill(path=path, name=path.name, is_dir=True, sha256=tree_sha256(path))
    if not path.is_file():
        raise ConfigError(f"omk.yaml skill: file not found: {path}")
    return Skill(path=path, name=path.stem, is_dir=False, sha256=_file_sha256(path))


def _artifact(settings: TargetSettings) -> tuple[list[Skill], str | None]:
    """(the skills, the text for --append-system-prompt)."""
    text = settings.system
    if text is not None and not isinstance(text, str):
        raise ConfigError("omk.yaml system: must be text")
    skills = [_skill(found) for found in configured_skills(settings)]
    skill = skills[0] if len(skills) == 1 else None
    if skill is not None and not skill.is_dir:
        if text is not None:
            raise ConfigError("omk.yaml: set either `system` (text) or `skill` (a file), not both")
        try:
            text = read_text_file(skill.path)
        except OSError as exc:
            raise ConfigError(f"omk.yaml skill: cannot read {skill.path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"omk.yaml skill: cannot read {skill.path}: {exc}") from None
    return skills, text


def read_mcp_config(path: Path) -> tuple[bytes, dict[str, Any]]:
    """The bytes of `claude.mcp_config` and its `mcpServers`, read by the file rules (a regular
    file, never a FIFO, a device or /proc, up to the samples-file cap); ConfigError in one line."""
    from omk.io.safe_files import read_regular_bytes, sample_file_cap

    try:
        raw = read_regular_bytes(path, sample_file_cap())
        data = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"omk.yaml claude.mcp_config: file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"omk.yaml claude.mcp_config: cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ConfigError(f"omk.yaml claude.mcp_config: cannot read {path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        raise ConfigError(f"omk.yaml claude.mcp_config: {path} must hold an object with `mcpServers`")
    return raw, data["mcpServers"]


def load_settings(model: str, spec: str, settings: TargetSettings) -> ClaudeSettings:
    block = settings_block(settings.claude, "claude", BLOCK_KEYS)
    if "api_key" in block:
        raise ConfigError("omk.yaml claude: keys are never written in omk.yaml; set ANTHROPIC_API_KEY")
    mcp = block.get("mcp_config")
    if mcp is not None:
        read_mcp_config(Path(str(mcp)))
    user_config = block.get("user_config", False)
    if not isinstance(user_config, bool):
        raise ConfigError("omk.yaml claude.user_config: must be true or false")
    binary = find_binary(block, spec)
    if not user_config:
        check_credentials(spec, block)
    skills, system = _artifact(settings)
    return ClaudeSettings(
        binary=binary,
        version=cli_version(binary, spec),
        model=model or None,
        price=price_setting(block, "claude") or cli_price("claude", model),
        skills=skills,
        system=system,
        max_turns=max_turns(settings),
        args=CLI.string_list(block, "args"),
        env_names=CLI.string_list(block, "env"),
        mcp_config=Path(str(mcp)) if mcp is not None else None,
        user_config=user_config,
    )


def child_environment(cfg: ClaudeSettings, home: Path) -> dict[str, str]:
    """The CLI's environment: isolated (its own HOME and config folder, only the variables that
    reach the model), or omk's own under `claude.user_config: true`."""
    if cfg.user_config:
        return {**os.environ, **FIXED_VARIABLES}
    env = {k: v for k, v in os.environ.items() if k in PASSED_VARIABLES or k.startswith(PASSED_PREFIXES)}
    env.update({k: os.environ[k] for k in cfg.env_names if k in os.environ})
    env.update(FIXED_VARIABLES)
    env["HOME"] = str(home)
    env["CLAUDE_CONFIG_DIR"] = str(home / ".claude")
    return env


def isolation(cfg: ClaudeSettings) -> dict[str, Any]:
    """What the report says was kept out of the run (names only, never values)."""
    if cfg.user_config:
        return {"isolated": False, "note": "claude.user_config: the user's own HOME, ~/.claude and MCP servers are used"}
    return {
        "isolated": True,
        "home": "a fresh folder per sample (HOME and CLAUDE_CONFIG_DIR): no user settings, skills, CLAUDE.md, plugins or sessions",
        "setting_sources": ["project", "local"],
        "working_dir": "a fresh folder per sample: the skill and the sample's files_available only",
        "mcp_servers": "only claude.mcp_config and omk's mock stub (--strict-mcp-config)",
        "environment": {"passed": list(PASSED_VARIABLES), "prefixes": list(PASSED_PREFIXES), "extra": list(cfg.env_names)},
    }


USER_FILES = ("settings.json", "settings.local.json", "CLAUDE.md")  # in the user's config folder


def user_files_digest() -> dict[str, str | None]:
    """Under `claude.user_config`: the sha256 of the user's own settings files the CLI reads
    (`$CLAUDE_CONFIG_DIR` or `~/.claude`), for the cache key; None for one that is not there.
    Their `env` block can point the CLI at another endpoint or model."""
    from omk.io.safe_files import read_regular_bytes, sample_file_cap

    folder = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    found: dict[str, str | None] = {}
    for name in USER_FILES:
        try:
            found[name] = hashlib.sha256(read_regular_bytes(folder / name, sample_file_cap())).hexdigest()
        except (OSError, ValueError):
            found[name] = None
    return found
