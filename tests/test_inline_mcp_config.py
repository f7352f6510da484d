"""`.mcp.json`: eligibility, validation with file and line, matching, urlTransform, contentExtract."""

from __future__ import annotations

import json

import pytest

from omk.core.errors import ConfigError
from omk.inline.mcp_config import TransformMismatch, extract_content, load_mcp_config, resolve_config_path

SEED_SERVER = {
    "command": "npx",
    "args": ["@corp/docs-mcp-server"],
    "env": {"DOCS_API_TOKEN": "xxx-secret"},
    "urlPatterns": ["docs.corp.net"],
    "fetchTool": {
        "name": "fetch_doc",
        "urlTransform": {
            "regex": "docs\\.corp\\.net/([^/]+/[^/]+)/([^/?#]+)",
            "params": {"namespace": "$1", "slug": "$2", "missing": "$7", "fixed": "v-$2-$1"},
        },
        "contentExtract": "data.body",
    },
}


def write(tmp_path, data, name=".mcp.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def test_seed_format_loads_and_transforms_urls(tmp_path):
    cfg = load_mcp_config(write(tmp_path, {"mcpServers": {"docs": SEED_SERVER}}))
    assert cfg is not None
    assert [s.name for s in cfg.servers] == ["docs"]
    server = cfg.server_for("https://docs.corp.net/team/space/page-1?x=1")
    assert server is not None
    assert server.cwd == tmp_path
    assert server.fetch_tool.arguments("https://docs.corp.net/team/space/page-1?x=1") == {
        "namespace": "team/space",
        "slug": "page-1",
        "missing": "",
        "fixed": "v-page-1-team/space",
    }
    with pytest.raises(TransformMismatch, match="does not match the urlTransform regex"):
        server.fetch_tool.arguments("https://docs.corp.net/only-one")
    assert cfg.secrets() == ["xxx-secret"]
    assert "xxx-secret" not in repr(cfg)


def test_simple_mode_uses_url_param_and_servers_key_is_accepted(tmp_path):
    data = {"servers": {"w": {"command": "x", "urlPatterns": ["wiki."], "fetchTool": {"name": "get", "urlParam": "link"}}}}
    cfg = load_mcp_config(write(tmp_path, data))
    assert cfg.servers[0].fetch_tool.arguments("https://wiki.corp/a") == {"link": "https://wiki.corp/a"}
    data["servers"]["w"]["fetchTool"].pop("urlParam")
    assert load_mcp_config(write(tmp_path, data)).servers[0].fetch_tool.arguments("u") == {"url": "u"}


def test_first_server_in_file_order_with_a_substring_pattern_wins(tmp_path):
    a = {"command": "a", "urlPatterns": ["corp.net/wiki"], "fetchTool": {"name": "t"}}
    b = {"command": "b", "urlPatterns": ["corp.net"], "fetchTool": {"name": "t"}}
    cfg = load_mcp_config(write(tmp_path, {"mcpServers": {"b": b, "a": a}}))
    assert cfg.server_for("https://corp.net/wiki/x").name == "b"  # key order, not specificity
    assert cfg.server_for("https://other.net/x") is None
    # patterns are substrings, not regex or glob
    c = {"command": "c", "urlPatterns": ["corp.*"], "fetchTool": {"name": "t"}}
    assert load_mcp_config(write(tmp_path, {"mcpServers": {"c": c}})).server_for("https://corp.net/") is None


def test_servers_without_url_patterns_are_not_url_fetchers(tmp_path):
    data = {"mcpServers": {"github": {"command": "gh-mcp"}, "fs": {"url": "http://x"}}}
    assert load_mcp_config(write(tmp_path, data)) is None


def test_missing_default_file_is_no_mcp_but_a_missing_explicit_file_is_an_error(tmp_path):
    assert load_mcp_config(tmp_path / ".mcp.json") is None
    with pytest.raises(ConfigError, match="MCP config file not found"):
        load_mcp_config(tmp_path / "nope.json", explicit=True)


def test_invalid_json_names_file_and_line(tmp_path):
    path = write(tmp_path, '{\n  "mcpServers": {\n    "docs": { "command": "x", }\n  }\n}')
    with pytest.raises(ConfigError) as err:
        load_mcp_config(path)
    assert err.value.lines() == [f"{path}:3: invalid JSON: Expecting property name enclosed in double quotes"]


def test_incomplete_url_fetching_server_is_reported_field_by_field(tmp_path):
    bad = {"urlPatterns": [], "env": {"K": 1}, "fetchTool": {"name": "t", "urlTransform": {"regex": "(", "params": {"a": "$1"}}}}
    path = write(tmp_path, {"mcpServers": {"ok": SEED_SERVER, "docs2": bad}})
    with pytest.raises(ConfigError) as err:
        load_mcp_config(path)
    lines = err.value.lines()
    assert any(line.startswith(f"{path}:") and "mcpServers.docs2 command: must be a non-empty string" in line for line in lines)
    assert any("mcpServers.docs2 env: must be an object of string values" in line for line in lines)
    assert any("mcpServers.docs2 urlPatterns: must be a non-empty list" in line for line in lines)
    assert any("mcpServers.docs2 fetchTool.urlTransform.regex: invalid regular expression" in line for line in lines)
    # every line carries a line number inside the file
    assert all(line.split(":")[1].isdigit() for line in lines)


def test_explicit_path_resolves_relative_to_omk_yaml_then_default_in_project_dirs(tmp_path):
    (tmp_path / "cfg").mkdir()
    assert resolve_config_path("m.json", tmp_path / "cfg" / "omk.yaml", []) == (tmp_path / "cfg" / "m.json", True)
    assert resolve_config_path(str(tmp_path / "abs.json"), None, []) == (tmp_path / "abs.json", True)
    write(tmp_path / "cfg", {"mcpServers": {}})
    assert resolve_config_path(None, None, [tmp_path, tmp_path / "cfg"]) == (tmp_path / "cfg" / ".mcp.json", False)
    assert resolve_config_path(None, None, [tmp_path]) == (None, False)


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        ('{"data": {"body": "Hello"}}', "data.body", "Hello"),
        ('{"data": {"body": {"b": [1, "é"]}}}', "data.body", '{"b":[1,"é"]}'),
        ('{"data": {"items": ["a", "b"]}}', "data.items.1", "b"),
        ('{"data": {"body": ""}}', "data.body", '{"data": {"body": ""}}'),
        ('{"data": {"body": 42}}', "data.body", '{"data": {"body": 42}}'),
        ('{"data": {}}', "data.body", '{"data": {}}'),
        ("not json", "data.body", "not json"),
        ('{"a": 1}', None, '{"a": 1}'),
    ],
)
def test_content_extract_walks_the_path_and_falls_back_to_raw_text(text, path, expected):
    assert extract_content(text, path) == expected
