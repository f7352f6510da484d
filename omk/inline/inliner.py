"""URL inlining for a run: find URLs, fetch each once (MCP first, then HTTP), splice, record.

Failures never stop the run: the URL stays as written, one stderr line per failed URL names the
samples it affects, and `Sample.inlined_urls` records every URL's fate for the report.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO
from urllib.parse import urlsplit

from omk.core import extras
from omk.core.errors import ConfigError, Problem
from omk.core.secrets import Masker
from omk.core.tasks import gather_all
from omk.inline.fetched import Fetched, FetchFailure
from omk.inline.policy import UrlPolicy, build_policy
from omk.inline.urls import SCANNED_FIELDS, find_urls, splice
from omk.io.textsafe import for_terminal, plural
from omk.samples.model import Sample

if TYPE_CHECKING:  # the fetchers (and httpx, slow to import) load only when a sample has a URL
    from omk.inline.guard import Resolver
    from omk.inline.http_fetch import HttpFetcher
    from omk.inline.mcp_config import McpConfig


class InlineSettings(Protocol):
    """What inlining reads of a run's settings (omk.settings.config.Settings has it all)."""

    url_timeout: float | None
    url_max_bytes: int | None
    mcp_config: str | None
    config_file: Path | None
    url_allow: list[str]
    no_urls: bool
    cwd: Path

    def blocks(self) -> Mapping[str, Any]:
        """The provider blocks, whose keys are masked in whatever inlining records."""
        ...


class _Resolution:
    """Everything tried for one URL, in order; the last attempt decides."""

    def __init__(self, attempts: list[Fetched | FetchFailure]):
        self.attempts = attempts

    @property
    def final(self) -> Fetched | FetchFailure:
        return self.attempts[-1]


def _project_dirs(samples: list[Sample], cwd: Path) -> list[Path]:
    dirs = list(dict.fromkeys(Path(s.base_dir) for s in samples))
    return dirs if cwd in dirs else [*dirs, cwd]


def _read_settings(settings: InlineSettings) -> tuple[float, int, str | None, Path | None]:
    from omk.inline.http_fetch import DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT

    timeout = float(settings.url_timeout or DEFAULT_TIMEOUT)
    max_bytes = int(settings.url_max_bytes or DEFAULT_MAX_BYTES)
    return timeout, max_bytes, settings.mcp_config, settings.config_file


def url_policy(settings: InlineSettings) -> UrlPolicy:
    """Where URL inlining may connect: the run's allow-list, or nowhere with `--no-urls`."""
    return build_policy(list(settings.url_allow), enabled=not settings.no_urls)


def _allowed_by_name(policy: UrlPolicy) -> Any:
    def wanted(url: str) -> bool:
        try:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return False
        return policy.allows_host(parts.hostname or "", port)

    return wanted


async def _resolve_all(urls: list[str], config: McpConfig | None, http: HttpFetcher, mask: Masker) -> dict[str, _Resolution]:
    mcp = None
    if config is not None and any(config.server_for(u) for u in urls):
        from omk.inline.mcp_fetch import McpFetcher  # imports the SDK: only when a URL needs it

        mcp = McpFetcher(mask=mask, max_bytes=http.max_bytes)  # the same cap as a fetched page

    async def resolve(url: str) -> _Resolution:
        attempts: list[Fetched | FetchFailure] = []
        server = config.server_for(url) if config is not None else None
        if server is not None and mcp is not None:
            attempts.append(await mcp.fetch(server, url))
            if isinstance(attempts[-1], Fetched):
                return _Resolution(attempts)  # MCP resolved it: not fetched over HTTP
        attempts.append(await http.fetch(url))
        return _Resolution(attempts)

    try:
        resolutions = await gather_all(*(resolve(u) for u in urls))
    finally:
        if mcp is not None:
            await mcp.aclose()
    return dict(zip(urls, resolutions, strict=True))


def _record(url: str, fields: list[str], res: _Resolution, redact: Masker) -> dict[str, Any]:
    failed = [{"source": a.source, "error": redact(a.reason)} for a in res.attempts if isinstance(a, FetchFailure)]
    final = res.final
    if isinstance(final, Fetched):
        return {
            "url": url,
            "fields": fields,
            "status": "inlined",
            "source": final.source,
            "chars": len(final.content),
            "sha256": hashlib.sha256(final.content.encode("utf-8")).hexdigest(),
            "failed_attempts": failed,
        }
    return {
        "url": url,
        "fields": fields,
        "status": "failed",
        "source": final.source,
        "error": redact(final.reason),
        "hint": final.hint,
        "failed_attempts": failed,
    }


def has_urls_to_inline(samples: list[Sample], settings: InlineSettings) -> bool:
    """Whether inlining would rewrite any of these samples (their prompts are known only after it)."""
    policy = url_policy(settings)
    if not policy.enabled:
        return False
    wanted = _allowed_by_name(policy) if policy.allow else None
    return any(find_urls(getattr(obj, attr), wanted) for sample in samples for obj, attr in _texts(sample).values())


async def inline_urls(samples: list[Sample], settings: InlineSettings, err: TextIO | None = None, resolver: Resolver | None = None) -> None:
    """Rewrite `prompt`/`context` of `samples` in place with the documents their URLs point to.

    Only addresses `url_policy(settings)` allows are connected to; `resolver` replaces the
    system's name lookup (tests)."""
    err = err or sys.stderr
    policy = url_policy(settings)
    if not policy.enabled:
        return
    wanted = _allowed_by_name(policy) if policy.allow else None
    where: dict[str, dict[str, list[str]]] = {}  # url -> sample_id -> fields
    per_sample: list[tuple[Sample, dict[str, list[str]]]] = []
    for sample in samples:
        found = {label: find_urls(getattr(obj, attr), wanted) for label, (obj, attr) in _texts(sample).items()}
        if any(found.values()):
            per_sample.append((sample, found))
            for field_name, urls in found.items():
                for url in urls:
                    where.setdefault(url, {}).setdefault(sample.sample_id, []).append(field_name)
    if not where:
        return
    from omk.inline.http_fetch import HttpFetcher
    from omk.inline.mcp_config import load_mcp_config, resolve_config_path

    timeout, max_bytes, explicit, config_file = _read_settings(settings)
    config_path, is_explicit = resolve_config_path(explicit, config_file, _project_dirs(samples, settings.cwd))
    config = load_mcp_config(config_path, is_explicit)
    _require_sdk(config, list(where))
    redact = Masker.for_run(settings.blocks(), config.secrets() if config else [])  # the provider blocks' keys are masked

    extra = {"resolver": resolver} if resolver is not None else {}
    http = HttpFetcher(timeout=timeout, max_bytes=max_bytes, policy=policy, **extra)
    try:
        resolutions = await _resolve_all(list(where), config, http, redact)
    finally:
        await http.aclose()

    contents = {u: redact(r.final.content) for u, r in resolutions.items() if isinstance(r.final, Fetched)}
    for sample, found in per_sample:
        texts = _texts(sample)
        for field_name, urls in found.items():
            mine = {u: contents[u] for u in urls if u in contents}
            if mine:
                obj, attr = texts[field_name]
                setattr(obj, attr, splice(getattr(obj, attr), mine))
        if sample.turns:
            sample.prompt = sample.turns[0].prompt  # a conversation's prompt is its first turn's
        order = list(dict.fromkeys(u for urls in found.values() for u in urls))
        sample.inlined_urls = tuple(_record(u, where[u][sample.sample_id], resolutions[u], redact) for u in order)

    _print_outcome(where, resolutions, redact, err)


def _require_sdk(config: McpConfig | None, urls: list[str]) -> None:
    """ConfigError, before any fetch, when a URL goes to an MCP server and the SDK is not installed."""
    if config is None or extras.installed("mcp") or not any(config.server_for(u) for u in urls):
        return
    message = extras.missing_message("mcp", "URL inlining through the MCP servers here")
    raise ConfigError([Problem(str(config.path), None, "", "", message)])


def _texts(sample: Sample) -> dict[str, tuple[Any, str]]:
    """Where URLs are looked for, by the field name the report gives: `prompt` and `context`, or a
    conversation's `turns[i].prompt` and `turns[i].context` (its own prompt is turn 0's)."""
    if sample.turns:
        return {f"turns[{i}].{f}": (turn, f) for i, turn in enumerate(sample.turns) for f in SCANNED_FIELDS}
    return {f: (sample, f) for f in SCANNED_FIELDS}


def _print_outcome(where: dict[str, dict[str, list[str]]], resolutions: dict[str, _Resolution], redact: Masker, err: TextIO) -> None:
    failed = [u for u, r in resolutions.items() if isinstance(r.final, FetchFailure)]
    inlined = len(resolutions) - len(failed)
    via_mcp = sum(1 for r in resolutions.values() if isinstance(r.final, Fetched) and r.final.source != "http")
    if inlined:
        print(f"omk: inlined {plural(inlined, 'URL', 'URLs')} ({via_mcp} via MCP, {inlined - via_mcp} over HTTP)", file=err)
    for url in failed:
        final = resolutions[url].final
        assert isinstance(final, FetchFailure)
        tried = [a.source for a in resolutions[url].attempts]
        samples = ", ".join(where[url])
        line = f"omk: URL not inlined: {url} — {redact(final.reason)} [{' then '.join(tried)}]; {final.hint}; samples: {samples}"
        print(for_terminal(line), file=err)  # a server's words: no escape sequence reaches the terminal
    if failed:
        print(f"omk: ⚠ {plural(len(failed), 'URL', 'URLs')} failed to fetch; they stay as written in the prompt", file=err)
