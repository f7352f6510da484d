"""`.mcp.json`: which MCP servers fetch which URLs, and how to call their fetch tool.

Format (as omk 0.23 reads it): `{"mcpServers": {NAME: {command, args, env,
urlPatterns, fetchTool: {name, urlParam, urlTransform: {regex, params}, contentExtract}}}}`;
`servers` is accepted in place of `mcpServers`. A server without `urlPatterns` is not a URL
fetcher (the same file may list servers for other tools) and is left out; one with
`urlPatterns` must be complete, else the run stops with exit 2 naming the file, line and field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import regex

from omk.core.errors import ConfigError, Problem

DEFAULT_NAME = ".mcp.json"
_GROUP_REF = regex.compile(r"\$(\d+)")


class TransformMismatch(Exception):
    """The URL does not match the server's `urlTransform.regex`."""


class UrlTransform(msgspec.Struct, frozen=True):
    pattern: str
    compiled: Any  # regex.Pattern
    params: dict[str, str]

    def arguments(self, url: str) -> dict[str, str]:
        """Tool arguments from the first (unanchored) match; `$N` of a missing group becomes ''."""
        m = self.compiled.search(url)
        if m is None:
            raise TransformMismatch(f"URL does not match the urlTransform regex: {self.pattern}")

        def group(ref: regex.Match) -> str:
            n = int(ref.group(1))
            return (m.group(n) or "") if n <= len(m.groups()) else ""

        return {name: _GROUP_REF.sub(group, template) for name, template in self.params.items()}


class FetchTool(msgspec.Struct, frozen=True, gc=False):
    name: str
    url_param: str = "url"
    url_transform: UrlTransform | None = None
    content_extract: str | None = None

    def arguments(self, url: str) -> dict[str, str]:
        if self.url_transform is not None:
            return self.url_transform.arguments(url)
        return {self.url_param: url}


class McpServer(msgspec.Struct, frozen=True, gc=False):
    name: str
    command: str
    args: tuple[str, ...]
    env: dict[str, str]  # secrets: never printed, reported or logged (left out of the repr)
    url_patterns: tuple[str, ...]
    fetch_tool: FetchTool
    cwd: Path  # the folder of the config file: relative commands and args resolve there

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__struct_fields__ if name != "env")
        return f"McpServer({shown})"

    def handles(self, url: str) -> bool:
        return any(p in url for p in self.url_patterns)  # plain substrings, not regex or glob


class McpConfig(msgspec.Struct, frozen=True):
    path: Path
    servers: list[McpServer]

    def server_for(self, url: str) -> McpServer | None:
        """The first server, in file order, with a pattern contained in the URL."""
        return next((s for s in self.servers if s.handles(url)), None)

    def secrets(self) -> list[str]:
        return [v for s in self.servers for v in s.env.values() if v]


def extract_content(text: str, path: str | None) -> str:
    """Walk a dotted path in the JSON text. A non-empty string is returned as is, an object or
    array as compact JSON; anything else (missing key, parse error, empty, number) gives the
    raw text back."""
    if not path:
        return text
    try:
        node: Any = json.loads(text)
    except ValueError:
        return text
    for key in path.split("."):
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return text
    if isinstance(node, str) and node:
        return node
    if isinstance(node, dict | list):
        return json.dumps(node, ensure_ascii=False, separators=(",", ":"))
    return text


def resolve_config_path(explicit: str | None, config_file: Path | None, project_dirs: list[Path]) -> tuple[Path | None, bool]:
    """(path, explicit?): `explicit` (from --mcp-config or omk.yaml, relative to omk.yaml's
    folder), else the first `.mcp.json` found in `project_dirs`."""
    if explicit:
        p = Path(explicit).expanduser()
        if not p.is_absolute() and config_file is not None:
            p = config_file.parent / p
        return p, True
    for folder in project_dirs:
        if (folder / DEFAULT_NAME).is_file():
            return folder / DEFAULT_NAME, False
    return None, False


def load_mcp_config(path: Path | None, explicit: bool = False) -> McpConfig | None:
    """The URL-fetching servers in `path`; None when there is no file or no such server."""
    if path is None:
        return None
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        if explicit:
            raise ConfigError([Problem(name, None, "", "", "MCP config file not found")]) from None
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([Problem(name, None, "", "", f"cannot read MCP config: {exc}")]) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError([Problem(name, exc.lineno, "", "", f"invalid JSON: {exc.msg}")]) from None
    if not isinstance(data, dict):
        raise ConfigError([Problem(name, 1, "", "", "must be a JSON object with `mcpServers`")])
    key = "mcpServers" if "mcpServers" in data else "servers"
    entries = data.get(key, {})
    if not isinstance(entries, dict):
        raise ConfigError([Problem(name, _line_of(text, key), "", key, "must be an object: server name -> settings")])
    problems: list[Problem] = []
    servers = []
    for server_name, raw in entries.items():
        if not isinstance(raw, dict) or "urlPatterns" not in raw:
            continue
        server = _parse_server(server_name, raw, path, text, problems)
        if server is not None:
            servers.append(server)
    if problems:
        raise ConfigError(problems)
    return McpConfig(path, servers) if servers else None


def _line_of(text: str, key: str, after: int = 0) -> int | None:
    at = text.find(json.dumps(key), after)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _parse_server(name: str, raw: dict[str, Any], path: Path, text: str, problems: list[Problem]) -> McpServer | None:
    file = str(path)
    start = text.find(json.dumps(name))
    where = f"mcpServers.{name}"
    before = len(problems)

    def bad(field_name: str, message: str) -> None:
        line = _line_of(text, field_name.split(".")[-1], max(start, 0)) or _line_of(text, name)
        problems.append(Problem(file, line, where, field_name, message))

    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        bad("command", "must be a non-empty string (the program that starts the server)")
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        bad("args", "must be a list of strings")
    env = raw.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        bad("env", "must be an object of string values")
    patterns = raw.get("urlPatterns")
    if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) and p for p in patterns):
        bad("urlPatterns", "must be a non-empty list of non-empty strings (plain substrings of the URL)")
    tool = raw.get("fetchTool")
    fetch_tool = None
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
        bad("fetchTool.name", "must be a non-empty string (the tool that fetches a document)")
    else:
        fetch_tool = _parse_fetch_tool(tool, bad)
    if len(problems) > before or fetch_tool is None or not isinstance(command, str) or not isinstance(patterns, list):
        return None  # a wrong command or urlPatterns has added a problem already; tested again for the types
    return McpServer(
        name=name,
        command=command,
        args=tuple(args),
        env=dict(env),
        url_patterns=tuple(patterns),
        fetch_tool=fetch_tool,
        cwd=path.parent,
    )


def _parse_fetch_tool(tool: dict[str, Any], bad: Any) -> FetchTool | None:
    url_param = tool.get("urlParam", "url")
    if not isinstance(url_param, str) or not url_param:
        bad("fetchTool.urlParam", "must be a non-empty string")
        return None
    extract = tool.get("contentExtract")
    if extract is not None and (not isinstance(extract, str) or not extract):
        bad("fetchTool.contentExtract", "must be a dotted path such as data.body")
        return None
    transform = None
    raw_transform = tool.get("urlTransform")
    if raw_transform is not None:
        if not isinstance(raw_transform, dict):
            bad("fetchTool.urlTransform", "must be an object with `regex` and `params`")
            return None
        pattern, params = raw_transform.get("regex"), raw_transform.get("params")
        if not isinstance(pattern, str) or not pattern:
            bad("fetchTool.urlTransform.regex", "must be a non-empty string")
            return None
        try:
            compiled = regex.compile(pattern)
        except regex.error as exc:
            bad("fetchTool.urlTransform.regex", f"invalid regular expression: {exc}")
            return None
        if not isinstance(params, dict) or not params or not all(isinstance(v, str) for v in params.values()):
            bad("fetchTool.urlTransform.params", "must be an object of string templates such as \"$1\"")
            return None
        transform = UrlTransform(pattern, compiled, dict(params))
    return FetchTool(tool["name"], url_param, transform, extract)
