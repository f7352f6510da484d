"""`inline_urls` on samples directly: splicing into both fields, one fetch per URL, the stderr
summary, and no MCP SDK import when no URL needs a server."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from omk.inline import inline_urls
from omk.samples.model import Sample
from omk.settings.config import Settings

ROOT = Path(__file__).resolve().parent.parent


def test_both_fields_are_spliced_and_each_url_fetched_once(tmp_path, http):
    plain, missing = http.url("/plain.txt"), http.url("/missing")
    a = Sample("a", prompt=f"Read {plain} and {plain} again", context=f"ctx {plain}", base_dir=tmp_path)
    b = Sample("b", prompt=f"Also {plain} , broken {missing}", base_dir=tmp_path)
    c = Sample("c", prompt="no links", context=None, base_dir=tmp_path)
    before = http.hits["/plain.txt"]
    err = io.StringIO()
    asyncio.run(inline_urls([a, b, c], Settings(url_allow=["127.0.0.1"]), err=err))
    assert http.hits["/plain.txt"] - before == 1
    block = f"{plain}\n\n---\n" + "Release notes 2.4\n\nThe importer now accepts YAML anchors. "
    assert a.prompt.startswith("Read " + block)
    assert a.prompt.endswith(f"asked.\n--- and {plain} again")
    assert a.context.startswith("ctx " + block)
    assert [(u["url"], u["fields"], u["status"]) for u in a.inlined_urls] == [(plain, ["prompt", "context"], "inlined")]
    assert [(u["url"], u["status"]) for u in b.inlined_urls] == [(plain, "inlined"), (missing, "failed")]
    assert b.prompt.endswith(f"broken {missing}")
    assert c.inlined_urls == ()
    assert c.prompt == "no links"
    lines = err.getvalue().splitlines()
    assert lines == [
        "omk: inlined 1 URL (0 via MCP, 1 over HTTP)",
        f"omk: URL not inlined: {missing} — 404 Not Found [http]; the page does not exist: check the URL; samples: b",
        "omk: ⚠ 1 URL failed to fetch; they stay as written in the prompt",
    ]


def test_no_urls_means_no_output_and_no_config_read(tmp_path):
    (tmp_path / ".mcp.json").write_text("{ not json", encoding="utf-8")  # never read: nothing to fetch
    err = io.StringIO()
    s = Sample("a", prompt="see https://docs.example.com/x", base_dir=tmp_path)
    asyncio.run(inline_urls([s], Settings(), err=err))
    assert err.getvalue() == ""
    assert s.inlined_urls == ()
    assert s.prompt == "see https://docs.example.com/x"


def test_the_mcp_sdk_is_imported_only_when_a_url_needs_a_server(tmp_path, http):
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"docs": {
        "command": "does-not-matter", "urlPatterns": ["docs.corp.internal"], "fetchTool": {"name": "t"}}}}), encoding="utf-8")
    script = textwrap.dedent(f"""
        import asyncio, io, sys
        from pathlib import Path
        from omk.settings.config import Settings
        from omk.inline import inline_urls
        from omk.samples.model import Sample
        s = Sample("a", prompt="{http.url('/plain.txt')}", base_dir=Path({str(tmp_path)!r}))
        asyncio.run(inline_urls([s], Settings(url_allow=["127.0.0.1"]), err=io.StringIO()))
        print(s.inlined_urls[0]["status"], "mcp" in sys.modules)
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.stdout.split() == ["inlined", "False"], proc.stderr
