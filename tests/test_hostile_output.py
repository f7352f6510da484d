"""What a program or a page sends back cannot break omk's files or promises: strict JSON in every
file of the run folder, every stdout byte counted against the cap, conversions held to their
deadline. Real subprocesses, a real server on 127.0.0.1, the real command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_omk

PY = sys.executable


def omk(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, env=env, drop=("OMK_",), columns=None, timeout=120)


def refuse_constant(name: str) -> None:
    raise AssertionError(f"{name} is not strict JSON")


NONFINITE_TOOL_CALLS = """
import json, sys
sys.stdin.readline()
for i, value in enumerate(["NaN", "Infinity", "-Infinity"]):
    sys.stdout.write('{"type": "tool_call", "id": "c%d", "tool": "lookup", "input": {"x": %s}}\\n' % (i, value))
    sys.stdout.flush()
    sys.stdin.readline()
print(json.dumps({"type": "response", "output": "done"}), flush=True)
"""


def test_non_finite_numbers_from_a_programs_tool_calls_are_null_in_results_jsonl_and_report(tmp_path):
    (tmp_path / "agent.py").write_text(NONFINITE_TOOL_CALLS, encoding="utf-8")
    (tmp_path / "s.yaml").write_text(
        "samples:\n  - sample_id: a\n    prompt: hi\n    mocks: [{tool: lookup, return: found}]\n"
        "    assertions: [{type: contains, value: done}]\n",
        encoding="utf-8",
    )
    proc = omk(["eval", "s.yaml", "--target", f"cmd:{PY} agent.py", "--out", "run"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    stored = [json.loads(line, parse_constant=refuse_constant) for line in lines]
    assert [c["input"] for c in stored[0]["trace"]["tool_calls"]] == [{"x": None}] * 3
    report = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"), parse_constant=refuse_constant)
    assert [c["input"] for c in report["results"][0]["trace"]["tool_calls"]] == [{"x": None}] * 3
    warning = next(w for w in report["warnings"] if w.startswith("not-a-number or infinite values written as null"))
    assert "a.trace.tool_calls[0].input.x" in warning
    assert "a.trace.tool_calls[2].input.x" in warning


TOOL_CALL_FLOOD = """
import json, sys
sys.stdin.readline()
big = "z" * 400_000
for i in range(40):
    print(json.dumps({"type": "tool_call", "id": f"c{i}", "tool": "lookup", "input": {"blob": big}}), flush=True)
    sys.stdin.readline()
print(json.dumps({"type": "response", "output": "done"}), flush=True)
"""


def test_tool_call_lines_count_against_max_output_bytes(tmp_path):
    (tmp_path / "agent.py").write_text(TOOL_CALL_FLOOD, encoding="utf-8")
    (tmp_path / "omk.yaml").write_text("max_output_bytes: 1000000\n", encoding="utf-8")
    (tmp_path / "s.yaml").write_text(
        "samples:\n  - sample_id: a\n    prompt: hi\n    mocks: [{tool: lookup, return: found}]\n"
        "    assertions: [{type: contains, value: done}]\n",
        encoding="utf-8",
    )
    proc = omk(["eval", "s.yaml", "--target", f"cmd:{PY} agent.py", "--out", "run"], tmp_path)
    assert proc.returncode == 1, proc.stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    (result,) = report["results"]
    assert result["error"] and "printed more than 1000000 bytes on stdout" in result["error"], result["error"]
    assert (tmp_path / "run" / "report.json").stat().st_size < 1_000_000


def _converters_running() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"omk.inline.html_text" in cmdline:
                found.append(int(entry.name))
    return found


def test_turning_a_page_into_text_is_held_to_url_timeout_and_never_blocks_the_loop():
    import asyncio
    import time

    from inline_doc_server import DocServer

    from omk.inline.fetched import FetchFailure
    from omk.inline.http_fetch import HttpFetcher
    from omk.inline.policy import build_policy

    async def go(url: str) -> tuple[object, int]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        ticker = asyncio.create_task(tick())
        fetcher = HttpFetcher(policy=build_policy(["127.0.0.1"]), timeout=2)
        try:
            return await fetcher.fetch(url), ticks
        finally:
            ticker.cancel()
            await fetcher.aclose()

    # CPU time of this process, not the clock: the conversion's tens of seconds of work would show
    # here if it ran in this process, whatever else the machine is doing.
    with DocServer() as srv:
        cpu = time.process_time()
        got, ticks = asyncio.run(go(srv.url("/br-bomb.html")))
        cpu = time.process_time() - cpu
    assert isinstance(got, FetchFailure)
    assert "timed out" in got.reason, got
    assert cpu < 3, cpu  # the page was turned into text in a worker, stopped at the deadline
    assert ticks > 0  # the loop went on with other work meanwhile
    assert not _converters_running()


def test_a_large_page_is_still_turned_into_text(tmp_path):
    import asyncio

    from omk.inline.html_text import IN_PROCESS_BYTES, page_text

    html = ("<html><head><title>Big</title></head><body>" + "<p>para graph</p>" * (IN_PROCESS_BYTES // 10) + "</body></html>").encode()
    page = asyncio.run(page_text(html, "utf-8"))
    assert page.title == "Big"
    assert page.text.count("para graph") == IN_PROCESS_BYTES // 10
    deep = ("<div>" * 100_000 + "deep" + "</div>" * 100_000).encode()
    with pytest.raises(RecursionError):
        asyncio.run(page_text(deep, None))


BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]


def test_bidi_controls_are_escaped_on_the_terminal_and_unsafe_links_dropped_from_markdown(tmp_path):
    sample_id = "pay\u202egnp.exe"  # shown as "payexe.png" if the control reached the terminal raw
    output = "[ok](https://x.io) [docs](javascript:alert(1)) [d]( DATA:x) " + "".join(BIDI)
    (tmp_path / "s.json").write_text(
        json.dumps([{"sample_id": sample_id, "prompt": "hi", "assertions": [{"type": "equals", "value": "expected " + "\u2067x"}]}]),
        encoding="utf-8",
    )
    (tmp_path / "r.jsonl").write_text(json.dumps({"sample_id": sample_id, "output": output}) + "\n", encoding="utf-8")
    proc = omk(["eval", "s.json", "--target", "replay:r.jsonl", "--out", "run", "--format", "json,md"], tmp_path)
    assert proc.returncode == 1, proc.stderr
    shown = proc.stdout + proc.stderr
    assert not any(c in shown for c in BIDI), ascii(shown)
    assert "pay\\u202egnp.exe" in shown
    summary = (tmp_path / "run" / "summary.md").read_text(encoding="utf-8")
    assert not any(c in summary for c in BIDI), ascii(summary)
    assert "pay\\u202egnp.exe" in summary
    assert "](javascript:" not in summary.lower()
    assert "]( data:" not in summary.lower()
    assert "[docs&#93;(javascript:alert(1))" in summary
    assert "[ok](https://x.io)" in summary  # a safe link is kept


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("[x](javascript:alert(1))", False),
        ("[x]( JaVaScRiPt:alert(1))", False),
        ("[x](<vbscript:msgbox>)", False),
        ("[x\\](javascript:alert(1))", False),  # a backslash before the bracket changes nothing
        ("[x]: javascript:alert(1)", False),  # a link definition
        ("[x](data:text/html;base64,PHNjcmlwdD4=)", False),
        ("[x](https://example.com)", True),
        ("[x](mailto:a@example.com)", True),
        ("[x](relative/page.md)", True),
    ],
)
def test_only_http_https_and_mailto_links_stay_links(text, kept):
    from omk.io.textsafe import safe_markdown_links

    assert (safe_markdown_links(text) == text) == kept
