"""What the agent CLI targets (`claude:`, `codex:`) share in their setup: finding the CLI and
reading their omk.yaml block's lists."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from omk.errors import ConfigError
from omk.frozen import record


@record
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

    async def run(self, argv: list[str], cwd: Path, env: dict[str, str], prompt: str, max_bytes: int) -> tuple[bytes, bytes, int]:
        """Run the CLI once in its own process group (a kill takes its hooks and tools too), the
        prompt on stdin: (stdout within `max_bytes`, the tail of stderr, the exit code)."""
        from omk.process import OutputTooLarge, communicate, start_program, stop_program
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
