"""URL inlining end to end through `omk eval`: a real MCP server over stdio, a real loopback
HTTP server, a replay target, and the report's `results[].prompt` / `results[].urls`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_omk
from inline_doc_server import refused_url

from omk.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
DOCS_SERVER = Path(__file__).resolve().parent / "mcp_servers" / "docs_server.py"
SECRET = "tok-SECRET-4242-do-not-leak"
MCP_HOST = "docs.corp.internal"
DOCS_TRANSFORM = {"regex": r"docs\.corp\.internal/([^/]+/[^/]+)/([^/?#]+)", "params": {"namespace": "$1", "slug": "$2"}}
PORT_TRANSFORM = {"regex": r":(\d+)/([^/?#]+)", "params": {"namespace": "port-$1", "slug": "$2"}}


def mcp_config(tmp: Path) -> dict:
    def server(tool: str, pattern: str, *, transform: dict | None = None, extract: str | None = None, crash: bool = False) -> dict:
        fetch_tool: dict = {"name": tool}
        if transform:
            fetch_tool["urlTransform"] = transform
        if extract:
            fetch_tool["contentExtract"] = extract
        return {
            "command": sys.executable,
            "args": [str(DOCS_SERVER), *(["--crash"] if crash else [])],
            "env": {"DOCS_API_TOKEN": SECRET, "DOCS_EXPECTED_TOKEN": SECRET,
                    "DOCS_START_LOG": str(tmp / f"starts-{tool}.log"), "DOCS_CALL_LOG": str(tmp / "calls.log")},
            "urlPatterns": [pattern],
            "fetchTool": fetch_tool,
        }

    return {
        "mcpServers": {
            "github": {"command": "github-mcp"},  # a tool server, not a URL fetcher: ignored
            "docs": server("fetch_doc", MCP_HOST, transform=DOCS_TRANSFORM, extract="data.body"),
            "broken": server("fetch_broken", "via=broken", transform=PORT_TRANSFORM),
            "empty": server("fetch_nothing", "via=empty"),
            "crashy": server("fetch_plain", "via=crash", crash=True),
        }
    }


def write_project(tmp: Path, samples: list[dict], *, mcp: dict | None = None, omk_yaml: str = "") -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "eval-samples.json").write_text(json.dumps({"samples": samples}, ensure_ascii=False, indent=2), encoding="utf-8")
    responses = [{"sample_id": s["sample_id"], "output": "recorded answer"} for s in samples]
    (tmp / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in responses), encoding="utf-8")
    (tmp / "omk.yaml").write_text("target: replay:responses.jsonl\n" + omk_yaml, encoding="utf-8")
    if mcp is not None:
        (tmp / ".mcp.json").write_text(json.dumps(mcp, indent=2), encoding="utf-8")
    return tmp / "eval-samples.json"


def sample(sid: str, prompt: str, context: str | None = None) -> dict:
    s = {"sample_id": sid, "prompt": prompt, "assertions": [{"type": "contains", "value": "recorded"}]}
    if context is not None:
        s["context"] = context
    return s


def run_subprocess(samples_file: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    # The loopback test server is an inside address: reached through the allow-list (CI's way).
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "OMK_URL_ALLOW": "127.0.0.1"}
    env.pop("OMK_TARGET", None)
    env.pop("OMK_JUDGE", None)
    return run_omk(
        "eval", str(samples_file), "--out", str(out), *extra,
        cwd=samples_file.parent, base=env, drop=(), columns=None, timeout=180,
    )  # fmt: skip


def results_by_id(out: Path) -> dict[str, dict]:
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return {r["sample_id"]: r for r in report["results"]}


def urls_by_url(result: dict) -> dict[str, dict]:
    return {u["url"]: u for u in result["urls"]}


@pytest.fixture(scope="module")
def big_run(tmp_path_factory, http):
    """One `omk eval` subprocess over samples that take every path."""
    tmp = tmp_path_factory.mktemp("inline")
    u = http.url
    mcp_doc = f"https://{MCP_HOST}/team/space/feature-x"
    refused = refused_url()
    samples = [
        sample("mcp-prompt", f"Write test cases for {mcp_doc} please"),
        sample("mcp-shared", "Compare the two documents.", context=f"{mcp_doc}\nand\n{u('/plain.txt')}"),
        sample("http-html", f"Summarise {u('/doc.html')} and {u('/redirect')}"),
        sample("fallback", f"Read {u('/plain.txt?via=broken')} first"),
        sample("crash-fallback", f"Read {u('/doc.html?via=crash')}"),
        sample("empty-then-404", f"Read {u('/missing?via=empty')}"),
        sample("http-failures", " ".join([u("/missing"), u("/private"), u("/forbidden"), u("/boom"), u("/slow"),
                                          u("/huge"), u("/login-redirect"), refused])),
        sample("leaky", f"Token check https://{MCP_HOST}/team/space/echo-token"),
        sample("placeholders", "See https://wiki.example.com/prd/feature-x and http://localhost:8080/api and https://svc.test/x"),
        sample("no-urls", "Nothing to fetch here."),
    ]
    samples_file = write_project(tmp / "project", samples, mcp=mcp_config(tmp), omk_yaml="url_timeout: 3\n")
    out = tmp / "run"
    proc = run_subprocess(samples_file, out)
    return {"proc": proc, "out": out, "tmp": tmp, "results": results_by_id(out) if (out / "report.json").exists() else {},
            "mcp_doc": mcp_doc, "refused": refused}


def test_run_completes_despite_failed_urls(big_run):
    proc = big_run["proc"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert all(r["status"] == "ok" for r in big_run["results"].values())


def test_mcp_content_is_extracted_and_inlined_after_the_url(big_run):
    r = big_run["results"]["mcp-prompt"]
    doc = big_run["mcp_doc"]
    body = ("# feature-x\n\nPrivate document team/space/feature-x served over MCP. "
            "It explains the feature in enough words to be a real document.")
    assert r["prompt"] == f"Write test cases for {doc}\n\n---\n{body}\n--- please"
    rec = urls_by_url(r)[doc]
    assert rec["status"] == "inlined"
    assert rec["source"] == "mcp:docs"
    assert rec["fields"] == ["prompt"]
    assert rec["chars"] == len(body)
    assert len(rec["sha256"]) == 64
    assert rec["failed_attempts"] == []


def test_each_url_is_fetched_once_and_each_server_started_once(big_run, http):
    tmp = big_run["tmp"]
    calls = [json.loads(line) for line in (tmp / "calls.log").read_text().splitlines()]
    feature_calls = [c for c in calls if c["tool"] == "fetch_doc" and c["slug"] == "feature-x"]
    assert feature_calls == [{"tool": "fetch_doc", "namespace": "team/space", "slug": "feature-x"}]
    assert len((tmp / "starts-fetch_doc.log").read_text().splitlines()) == 1  # one session for the run
    assert http.hits["/plain.txt"] == 2  # once plain, once as the MCP-broken fallback: two different URLs
    assert http.hits["/missing"] == 2  # `/missing` and `/missing?via=empty`
    # the shared URL is inlined in the context of the second sample too
    shared = big_run["results"]["mcp-shared"]
    assert "Private document team/space/feature-x" in shared["prompt"]
    assert "Release notes 2.4" in shared["prompt"]
    assert {u["url"]: (u["source"], u["fields"]) for u in shared["urls"]} == {
        big_run["mcp_doc"]: ("mcp:docs", ["context"]),
        http.url("/plain.txt"): ("http", ["context"]),
    }


def test_a_url_mcp_resolved_is_not_fetched_over_http(big_run, http):
    assert not any(path.startswith("/team") for path in http.hits)


def test_http_html_is_turned_into_text_and_redirects_followed(big_run, http):
    r = big_run["results"]["http-html"]
    recs = urls_by_url(r)
    assert recs[http.url("/doc.html")]["source"] == "http"
    assert recs[http.url("/redirect")]["status"] == "inlined"
    assert r["prompt"].startswith(f"Summarise {http.url('/doc.html')}\n\n---\n# Feature X design\n")
    assert r["prompt"].count("- At most 10,000 rows per export.") == 2
    assert "SCRIPT-NOISE" not in r["prompt"]
    assert "<p>" not in r["prompt"]


def test_mcp_tool_error_falls_back_to_http(big_run, http):
    r = big_run["results"]["fallback"]
    rec = urls_by_url(r)[http.url("/plain.txt?via=broken")]
    assert rec["status"] == "inlined"
    assert rec["source"] == "http"
    assert rec["failed_attempts"][0]["source"] == "mcp:broken"
    assert 'tool "fetch_broken" call failed' in rec["failed_attempts"][0]["error"]
    assert "backend unavailable for" in rec["failed_attempts"][0]["error"]
    assert "Release notes 2.4" in r["prompt"]


def test_mcp_server_that_fails_to_start_falls_back_to_http(big_run, http):
    rec = urls_by_url(big_run["results"]["crash-fallback"])[http.url("/doc.html?via=crash")]
    assert rec["status"] == "inlined"
    assert rec["source"] == "http"
    error = rec["failed_attempts"][0]["error"]
    assert error.startswith('MCP server "crashy" failed to start:')
    assert "backend refused token [redacted]" in error


def test_empty_mcp_content_then_http_404_records_both(big_run, http):
    url = http.url("/missing?via=empty")
    r = big_run["results"]["empty-then-404"]
    assert r["prompt"] == f"Read {url}"  # left as written
    rec = urls_by_url(r)[url]
    assert rec["status"] == "failed"
    assert rec["error"] == "404 Not Found"
    assert rec["hint"] == "the page does not exist: check the URL"
    assert rec["failed_attempts"] == [
        {"source": "mcp:empty", "error": "MCP tool returned empty content"},
        {"source": "http", "error": "404 Not Found"},
    ]


def test_http_failures_leave_urls_as_written_with_reasons_and_hints(big_run, http):
    r = big_run["results"]["http-failures"]
    recs = urls_by_url(r)
    expect = {
        http.url("/missing"): ("404 Not Found", "the page does not exist"),
        http.url("/private"): ("401 Unauthorized", "needs authentication"),
        http.url("/forbidden"): ("403 Forbidden", "needs authentication"),
        http.url("/boom"): ("500 Internal Server Error", "the server failed"),
        http.url("/slow"): ("request timed out (3 s)", "check the network"),
        http.url("/huge"): ("larger than the 2 MB size cap", "url_max_bytes"),
        http.url("/login-redirect"): ("redirected to a sign-in page", "needs authentication"),
        big_run["refused"]: ("connection refused", "check the network"),
    }
    assert set(recs) == set(expect)
    for url, (reason, hint) in expect.items():
        assert recs[url]["status"] == "failed"
        assert recs[url]["source"] == "http"
        assert recs[url]["error"].startswith(reason), url
        assert hint in recs[url]["hint"], url
    assert "---" not in r["prompt"]  # nothing inlined: every URL stays as written


def test_failed_urls_are_listed_once_on_stderr_with_their_samples(big_run, http):
    lines = big_run["proc"].stderr.splitlines()
    failed = [ln for ln in lines if ln.startswith("omk: URL not inlined:")]
    assert len(failed) == 9  # 8 in http-failures + /missing?via=empty
    missing = [ln for ln in failed if f"{http.url('/missing')} " in ln]
    assert missing == [
        f"omk: URL not inlined: {http.url('/missing')} — 404 Not Found [http]; "
        "the page does not exist: check the URL; samples: http-failures"
    ]
    assert any("[mcp:empty then http]" in ln and "samples: empty-then-404" in ln for ln in failed)
    assert "omk: ⚠ 9 URLs failed to fetch; they stay as written in the prompt" in lines
    assert any(ln.startswith("omk: inlined ") and "via MCP" in ln for ln in lines)


def test_placeholder_urls_are_never_fetched_nor_recorded(big_run):
    r = big_run["results"]["placeholders"]
    assert r["urls"] == []
    assert r["prompt"] == "See https://wiki.example.com/prd/feature-x and http://localhost:8080/api and https://svc.test/x"
    assert big_run["results"]["no-urls"]["urls"] == []


def test_env_secrets_never_reach_output_reports_or_logs(big_run):
    proc = big_run["proc"]
    assert SECRET not in proc.stdout
    assert SECRET not in proc.stderr
    written = [*big_run["out"].rglob("*"), *(big_run["tmp"] / "project" / ".omk").rglob("*")]  # run folder, cache
    assert any(p.name == "report.json" for p in written)
    for path in written:
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    leaky = big_run["results"]["leaky"]
    assert "token=[redacted]" in leaky["prompt"]  # the server echoed its token: omk redacts it


def test_mcp_config_flag_and_size_cap_setting(tmp_path, http, capsys):
    mcp = mcp_config(tmp_path)
    cfg_dir = tmp_path / "elsewhere"
    cfg_dir.mkdir()
    (cfg_dir / "servers.json").write_text(json.dumps(mcp), encoding="utf-8")
    doc = f"https://{MCP_HOST}/team/space/flag-page"
    samples_file = write_project(tmp_path / "p", [sample("s1", f"{doc} {http.url('/stream-big')}")], omk_yaml="url_max_bytes: 1000\n")
    out = tmp_path / "run"
    code = main(["eval", str(samples_file), "--out", str(out), "--mcp-config", str(cfg_dir / "servers.json"), "--quiet",
                 "--url-allow", "127.0.0.1"])
    err = capsys.readouterr().err
    assert code == 0, err
    recs = urls_by_url(results_by_id(out)["s1"])
    assert recs[doc]["source"] == "mcp:docs"
    assert recs[http.url("/stream-big")]["error"] == "larger than the 1000 bytes size cap"
    assert SECRET not in err


def test_mcp_config_key_in_omk_yaml_is_relative_to_omk_yaml(tmp_path, capsys):
    (tmp_path / "p" / "conf").mkdir(parents=True)
    (tmp_path / "p" / "conf" / "mcp.json").write_text(json.dumps(mcp_config(tmp_path)), encoding="utf-8")
    doc = f"https://{MCP_HOST}/team/space/yaml-page"
    samples_file = write_project(tmp_path / "p", [sample("s1", doc)], omk_yaml="mcp_config: conf/mcp.json\n")
    out = tmp_path / "run"
    assert main(["eval", str(samples_file), "--out", str(out), "--quiet"]) == 0, capsys.readouterr().err
    assert urls_by_url(results_by_id(out)["s1"])[doc]["source"] == "mcp:docs"


def test_missing_explicit_mcp_config_is_bad_input(tmp_path, capsys):
    samples_file = write_project(tmp_path / "p", [sample("s1", "https://docs.corp.internal/a/b/c")])
    code = main(["eval", str(samples_file), "--out", str(tmp_path / "run"), "--mcp-config", "nope.json"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().endswith("nope.json: MCP config file not found")
    assert "Traceback" not in err


def test_broken_mcp_json_is_one_line_with_file_and_line(tmp_path):
    samples_file = write_project(tmp_path / "p", [sample("s1", "https://docs.corp.internal/a/b/c")])
    (tmp_path / "p" / ".mcp.json").write_text('{\n  "mcpServers": {\n    "docs": {"command": "x",}\n  }\n}\n', encoding="utf-8")
    proc = run_subprocess(samples_file, tmp_path / "run")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"{tmp_path / 'p' / '.mcp.json'}:3: invalid JSON: Expecting property name enclosed in double quotes"


def test_an_mcp_server_gets_only_its_declared_env_not_omks_keys(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-env-1234567890abcdef")
    monkeypatch.setenv("SOME_OTHER_SETTING", "from-the-parent")
    doc = f"https://{MCP_HOST}/team/space/echo-env"
    samples_file = write_project(tmp_path / "p", [sample("s1", doc)], mcp=mcp_config(tmp_path))
    assert main(["eval", str(samples_file), "--out", str(tmp_path / "run"), "--quiet"]) == 0, capsys.readouterr().err
    prompt = results_by_id(tmp_path / "run")["s1"]["prompt"]
    names = set(prompt.split(" env=", 1)[1].split(" ", 1)[0].split(","))
    declared = {"DOCS_API_TOKEN", "DOCS_EXPECTED_TOKEN", "DOCS_START_LOG", "DOCS_CALL_LOG"}
    basics = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM"}  # the MCP SDK's non-secret defaults
    basics.add("LC_CTYPE")  # set by the Python that runs the server itself (locale coercion)
    basics.add("OMK_CALL_MARK")  # omk's marker on every process it starts, so it can stop their descendants
    assert declared <= names and names <= declared | basics, names - declared - basics
    assert "openai=(none)" in prompt
    assert "SOME_OTHER_SETTING" not in names


def test_an_mcp_reply_over_url_max_bytes_is_refused_and_falls_back(tmp_path, http, capsys):
    """The same size cap as a fetched page applies to what an MCP server returns."""
    url = http.url("/missing?via=tiny-cap")
    mcp = mcp_config(tmp_path)
    mcp["mcpServers"]["plain"] = {**mcp["mcpServers"]["crashy"], "args": [str(DOCS_SERVER)], "urlPatterns": ["via=tiny-cap"]}
    samples_file = write_project(tmp_path / "p", [sample("s1", f"Read {url}")], mcp=mcp, omk_yaml="url_max_bytes: 40\n")
    out = tmp_path / "run"
    code = main(["eval", str(samples_file), "--out", str(out), "--quiet", "--url-allow", "127.0.0.1"])
    assert code == 0, capsys.readouterr().err
    rec = urls_by_url(results_by_id(out)["s1"])[url]
    first = rec["failed_attempts"][0]
    assert first["source"] == "mcp:plain"
    assert "over the 40-byte cap (url_max_bytes in omk.yaml)" in first["error"]


def test_an_mcp_tool_error_with_a_huge_text_becomes_a_short_reason(tmp_path, http, capsys):
    """A tool error is a reason, not a document: its text is cut (after masking) before it is
    recorded, however much the server sent."""
    from omk.inline.mcp_fetch import ERROR_CHARS

    url = http.url("/" + "z" * 200_000 + "?via=broken")
    samples_file = write_project(tmp_path / "p", [sample("s1", f"Read {url}")], mcp=mcp_config(tmp_path))
    out = tmp_path / "run"
    code = main(["eval", str(samples_file), "--out", str(out), "--quiet", "--url-allow", "127.0.0.1"])
    assert code == 0, capsys.readouterr().err
    first = urls_by_url(results_by_id(out)["s1"])[url]["failed_attempts"][0]
    assert first["source"] == "mcp:broken"
    assert first["error"].startswith('tool "fetch_broken" call failed: ')
    assert len(first["error"]) <= len('tool "fetch_broken" call failed: ') + ERROR_CHARS
