"""What a `codex:` run is set up from: the CLI binary, omk.yaml's `codex:` block, the skills.

Decided once per run, before any sample: a missing binary, key or bad setting stops the run with
exit 2 before work starts.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omk.core.errors import ConfigError
from omk.domain.skillset import configured_skills
from omk.io.safe_files import read_text_file
from omk.llm.pricing import cli_price, price_setting
from omk.settings.target_settings import TargetSettings
from omk.targets.agent_cli import AgentCli, settings_block
from omk.targets.claude.setup import PASSED_VARIABLES, cli_version, tree_sha256

INSTALL_HINT = "npm install -g @openai/codex"
CLI = AgentCli("codex", "Codex", "OMK_CODEX", INSTALL_HINT)
BLOCK_KEYS = {"path", "args", "env", "price"}
DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "no API key: set OPENAI_API_KEY (omk runs the CLI without your login)"
PASSED_PREFIXES = ("OPENAI_",)
# Tools the CLI answers itself (on the API's side or in its own process), which omk's PreToolUse
# hook never sees, so no mock can answer them: the feature each is switched off by (`--disable`),
# or None for web_search, which its own setting switches off (`web_search = "disabled"`). Under
# `mocksStrict` they are all switched off.
SELF_ANSWERED: dict[str, str | None] = {
    "web_search": None,
    "view_image": "view_image",
    "image_generation": "image_generation",
    "multi_agent": "multi_agent",
    "goals": "goals",
    "apps": "apps",
    "plugins": "plugins",
    "browser_use": "browser_use",
    "computer_use": "computer_use",
}
SELF_ANSWERED_FEATURES = [feature for feature in SELF_ANSWERED.values() if feature is not None]


@dataclass(slots=True)
class CodexSkill:
    """A skill folder (with SKILL.md), installed in the run's `$CODEX_HOME/skills/<name>/`."""

    path: Path
    name: str
    sha256: str

    def describe(self) -> dict[str, Any]:
        return {"path": str(self.path), "name": self.name, "installed_as": self.installed_as, "sha256": self.sha256[:16]}

    @property
    def installed_as(self) -> str:
        return f"$CODEX_HOME/skills/{self.name}/"


@dataclass(slots=True)
class CodexSettings:
    binary: str
    version: str
    model: str | None
    price: tuple[float, float] | None = None  # omk.yaml `codex.price`, else omk's table (omk/llm/pricing.py)
    skills: list[CodexSkill] = field(default_factory=list)
    system: str | None = None  # `system:` text, or a skill file's: given as the developer instructions
    args: list[str] = field(default_factory=list)  # extra flags, after omk's own
    env_names: list[str] = field(default_factory=list)  # more variables passed through by name

    @property
    def skill_names(self) -> list[str]:
        return [s.name for s in self.skills]


def find_binary(block: dict[str, Any], spec: str) -> str:
    """`OMK_CODEX`, then omk.yaml `codex.path`, then `codex` on PATH."""
    return CLI.find(block, spec)


def base_url() -> str:
    """The Responses API the CLI calls (it ends in /v1, as for `openai:` targets)."""
    return (os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def check_credentials(spec: str) -> None:
    """The isolated CLI has no login of its own (no auth.json in its CODEX_HOME)."""
    if not os.environ.get("OPENAI_API_KEY", "").strip():
        from omk.io.process import key_missing

        if not key_missing(message := f"target {spec!r}: {NO_KEY}"):
            raise ConfigError(message)


def _artifact(settings: TargetSettings) -> tuple[list[CodexSkill], str | None]:
    text = settings.system
    if text is not None and not isinstance(text, str):
        raise ConfigError("omk.yaml system: must be text")
    skills = []
    for found in configured_skills(settings):
        if found.is_dir:
            skills.append(CodexSkill(found.path, found.name, tree_sha256(found.path)))
            continue
        if text is not None:
            raise ConfigError("omk.yaml: set either `system` (text) or `skill` (a file), not both")
        try:
            text = read_text_file(found.path)
        except OSError as exc:
            raise ConfigError(f"omk.yaml skill: cannot read {found.path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"omk.yaml skill: cannot read {found.path}: {exc}") from None
    return skills, text


def load_settings(model: str, spec: str, settings: TargetSettings) -> CodexSettings:
    block = settings_block(settings.codex, "codex", BLOCK_KEYS)
    binary = find_binary(block, spec)
    check_credentials(spec)
    skills, system = _artifact(settings)
    return CodexSettings(
        binary=binary,
        version=cli_version(binary, spec),
        model=model or None,
        price=price_setting(block, "codex") or cli_price("codex", model),
        skills=skills,
        system=system,
        args=CLI.string_list(block, "args"),
        env_names=CLI.string_list(block, "env"),
    )


def child_environment(cfg: CodexSettings, home: Path) -> dict[str, str]:
    """Isolated: its own HOME and CODEX_HOME, only the variables that reach the model."""
    env = {k: v for k, v in os.environ.items() if k in PASSED_VARIABLES or k.startswith(PASSED_PREFIXES)}
    env.update({k: os.environ[k] for k in cfg.env_names if k in os.environ})
    env["HOME"] = str(home)
    env["CODEX_HOME"] = str(home / ".codex")
    return env


def isolation(cfg: CodexSettings) -> dict[str, Any]:
    """What the report says was kept out of the run (names only, never values)."""
    return {
        "isolated": True,
        "home": "a fresh folder per sample (HOME and CODEX_HOME): no config.toml, auth.json, AGENTS.md, skills or sessions",
        "user_config": "--ignore-user-config",
        "working_dir": "a fresh folder per sample: the sample's workspace and files_available only",
        "environment": {"passed": list(PASSED_VARIABLES), "prefixes": list(PASSED_PREFIXES), "extra": list(cfg.env_names)},
    }


def digest(text: str) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()[:16], "chars": len(text)}
