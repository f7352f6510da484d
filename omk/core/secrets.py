"""Secrets never leave omk in an artifact: masking of API keys, tokens and `.mcp.json` env values.

Which values are secret: every environment variable whose name says it holds one (a `KEY`,
`TOKEN`, `SECRET`, `PASSWORD`, `CREDENTIAL` or `AUTH` part, as in `OPENAI_API_KEY`,
`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`) and is at least `MIN_ENV_SECRET_CHARS` long, the
variables omk.yaml names with `api_key_env`, the `env` and `headers` values of the servers in
`claude.mcp_config`, and the values given to it explicitly (an `.mcp.json` server's `env`). Each is replaced by `[redacted]` wherever it appears.

The rule that keeps a key whole: mask first, cut afterwards. A text is masked at its source, in
full (a target's reply, an error body, a program's stderr, a judge's reply), before anything
shortens it for a message or a report; a key split by a cut made earlier cannot be recognised
any more. `Masker.clip` does both in that order.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 4  # an explicit secret shorter than this ("1", "on") is a setting
MIN_FRAGMENT_CHARS = 6  # the part of a key a cut left at the edge of a text, masked too
MIN_ENV_SECRET_CHARS = 8  # a variable found by its name must look like a key, not "true"
_SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|AUTH)(?:$|_)", re.I)
_NOT_A_SECRET = re.compile(r"_(?:FILE|PATH|DIR|SOCK|URL|HOST|PORT|ENV|NAME|TYPE|MODE|ID)$", re.I)
PROVIDERS = ("openai", "anthropic")


def secret_env_names(environ: Mapping[str, str]) -> list[str]:
    """The variables whose names say they hold a secret (`OPENAI_API_KEY`, `GH_TOKEN`…)."""
    return [n for n in environ if _SECRET_NAME.search(n) and not _NOT_A_SECRET.search(n)]


def configured_secrets(blocks: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """The secret values of this run's environment: variables named like secrets, and those
    omk.yaml names with `api_key_env` (whatever their name)."""
    env = os.environ if environ is None else environ
    values = [env[n] for n in secret_env_names(env) if len(env[n]) >= MIN_ENV_SECRET_CHARS]
    for provider in PROVIDERS:
        block = (blocks or {}).get(provider)
        name = block.get("api_key_env") if isinstance(block, dict) else None
        if isinstance(name, str) and env.get(name):
            values.append(env[name])
    claude = (blocks or {}).get("claude")
    if isinstance(claude, dict) and isinstance(claude.get("mcp_config"), str):
        values += mcp_config_secrets(claude["mcp_config"])
    return values


def mcp_config_secrets(path: str) -> list[str]:
    """The `env` and `headers` values of the servers an MCP config file (`claude.mcp_config`, in
    `.mcp.json`'s format) declares: tokens the servers it starts may echo into a reply. Read by
    the file rules; a file that cannot be read holds none (loading the settings says why)."""
    try:
        info = os.stat(path)
    except OSError:
        return []
    return list(_mcp_config_secrets(path, info.st_mtime_ns, info.st_size))


@functools.lru_cache(maxsize=8)
def _mcp_config_secrets(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    del mtime_ns, size  # only the cache's key: a file changed since it was read is read again
    import json

    from omk.io.safe_files import read_regular_bytes, sample_file_cap

    try:
        data = json.loads(read_regular_bytes(Path(path), sample_file_cap()))
    except (OSError, ValueError, RecursionError):
        return ()
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    found = []
    for server in servers.values() if isinstance(servers, dict) else ():
        for key in ("env", "headers"):
            block = server.get(key) if isinstance(server, dict) else None
            found += [v for v in block.values() if isinstance(v, str)] if isinstance(block, dict) else []
    return tuple(found)


class Masker:
    """Replaces known secret values with `[redacted]`, longest first."""

    def __init__(self, secrets: Iterable[str] = ()):
        unique = {s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_CHARS}
        self.secrets: tuple[str, ...] = tuple(sorted(unique, key=len, reverse=True))

    @classmethod
    def for_run(cls, blocks: Mapping[str, Any] | None = None, extra: Iterable[str] = ()) -> Masker:
        return cls([*configured_secrets(blocks), *extra])

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def with_secrets(self, more: Iterable[str]) -> Masker:
        return Masker([*self.secrets, *more])

    def __call__(self, text: str) -> str:
        if not self.secrets or not isinstance(text, str):
            return text
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def cut_edges(self, text: str) -> str:
        """Mask, and also a piece of a secret at either end of `text`: for a text something else
        already cut (the tail a rolling buffer kept, a stream stopped mid-write)."""
        text = self(text)
        for secret in self.secrets:
            for n in range(len(secret) - 1, MIN_FRAGMENT_CHARS - 1, -1):
                if text.startswith(secret[-n:]):
                    text = REDACTED + text[n:]
                    break
            for n in range(len(secret) - 1, MIN_FRAGMENT_CHARS - 1, -1):
                if text.endswith(secret[:n]):
                    text = text[:-n] + REDACTED
                    break
        return text

    def clip(self, text: str, limit: int, *, keep_end: bool = False) -> str:
        """Mask, then cut to `limit` characters (the last ones with `keep_end`)."""
        text = self(text)
        if len(text) <= limit:
            return text
        return text[-limit:] if keep_end else text[:limit]

    def value_if_present(self, value: Any) -> Any:
        """`value` masked, walking it only when a secret shows in its JSON text: the text is made
        at C speed, the walk is Python's, and most reports hold no secret at all. A secret with a
        character JSON escapes (a quote, a backslash, a control character) would not show in the
        text as it is, so with such a secret the walk always runs."""
        import json

        if not self.secrets:
            return value
        if all(json.dumps(secret, ensure_ascii=False)[1:-1] == secret for secret in self.secrets):
            text = json.dumps(value, ensure_ascii=False, default=str)
            if not any(secret in text for secret in self.secrets):
                return value
        return self.value(value)

    def may_be_in_json(self, text: str) -> bool:
        """Whether a secret may show in this JSON text: as it is, or (for a secret with a character
        JSON escapes) always."""
        import json

        return any(json.dumps(s, ensure_ascii=False)[1:-1] != s or s in text for s in self.secrets)

    def value(self, value: Any) -> Any:
        """`value` with every string inside it masked (dicts, lists and tuples walked)."""
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self(k) if isinstance(k, str) else k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.value(v) for v in value)
        return value
