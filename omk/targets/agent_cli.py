"""What the agent CLI targets (`claude:`, `codex:`) share in their setup: finding the CLI and
reading their omk.yaml block's lists."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omk.errors import ConfigError


@dataclass(frozen=True, slots=True)
class AgentCli:
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

    def string_list(self, block: dict[str, Any], key: str) -> list[str]:
        """omk.yaml `<program>.<key>` as a list of strings (none when unset)."""
        value = block.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"omk.yaml {self.program}.{key}: must be a list of strings")
        return list(value)
