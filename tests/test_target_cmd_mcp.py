"""`cmd:` with `cmd.mcp`: each sample's mocks served over MCP to a real agent (the official `mcp`
client in a real subprocess), on real loopback sockets (docs/targets.md, "Any agent, over MCP")."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
import yaml
from cli_support import run_omk

import omk
from omk.samples.model import Sample
from omk.targets import make_target
from omk.targets.base import TargetError
from omk.targets.mcp_sandbox import McpSandboxServer
from omk.targets.mocks import MockSandbox, offered_tools

ROOT = Path(__file__).resolve().parents[1]
MCP = {"cmd": {"mcp": True}}

# A test agent: writes the endpoint it was given to `<sample>.url` (in its cwd, the samples'
# folder) first thing, asks `whoami` over MCP, answers with what it got; a prompt with "sleep" then hangs.
AGENT = """
import json, os, sys, time

request = json.loads(sys.stdin.readline())
url = os.environ["OMK_MCP_URL"]
with open(request["sample_id"] + ".url", "a") as f:
    f.write(url + "\\n")
with open(request["sample_id"] + ".messages", "w") as f:  # the last turn's history
    json.dump(request["messages"], f)

import anyio  # after the endpoint is written: the SDK's import takes a second or more under load
from mcp import Client

async def go():
    async with Client(url) as client:
        result = await client.call_tool("whoami", {"asker": request["sample_id"]})
        return ("(error) " if result.is_error else "") + "".join(p.text for p in result.content)

output = anyio.run(go)
if request["prompt"].startswith("probe "):  # is the server of that earlier sample still listening?
    import socket
    from urllib.parse import urlsplit
    earlier = urlsplit(open(request["prompt"].split()[1] + ".url").readline().strip())
    try:
        socket.create_connection((earlier.hostname, earlier.port), timeout=5).close()
        output = "open"
    except ConnectionRefusedError:
        output = "refused"
if "fail" in request["prompt"]:
    sys.exit(1)
if "sleep" in request["prompt"]:
    time.sleep(600)
if "echo" in request["prompt"]:
    print("endpoint " + url, file=sys.stderr)
    output += " endpoint " + url
print(json.dumps({"type": "response", "output": output}), flush=True)
"""


def write_samples(tmp_path: Path, samples: list[dict]) -> Path:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    path = tmp_path / "eval-samples.yaml"
    path.write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    return path


def whoami(sample_id: str, **more) -> dict:
    return {"sample_id": sample_id, "prompt": "who?", "mocks": [{"tool": "whoami", "return": f"I am {sample_id}"}], **more}


def evaluate(tmp_path: Path, samples: list[dict], **options):
    path = write_samples(tmp_path, samples)
    target = make_target(f"cmd:{sys.executable} agent.py", base_dir=tmp_path, settings=MCP)
    return omk.evaluate(path, target=target, judge=False, cache=False, **options)


def refused(url: str) -> bool:
    """Whether a TCP connection to the URL's port is refused now."""
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


def urls(tmp_path: Path, sample_id: str) -> list[str]:
    return (tmp_path / f"{sample_id}.url").read_text(encoding="utf-8").split()


def test_the_bundled_mcp_agent_lists_calls_and_is_traced(tmp_path):
    """samples/mcp-agent through `omk eval`: tools listed, mocks' answers, calls in the trace."""
    proc = run_omk(
        "eval", "samples/mcp-agent/eval-samples.yaml", "--no-cache", "--format", "json", "--out", str(tmp_path),
        cwd=ROOT, drop=(), columns=None, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = {r["sample_id"]: r for r in json.loads((tmp_path / "report.json").read_text())["results"]}
    order = results["mcp-order-status"]
    assert order["output"].startswith("tools: lookup_order\n")
    assert order["trace"]["tool_calls"] == [
        {"tool": "lookup_order", "input": {"order_id": "A1001"}, "output": {"order_id": "A1001", "status": "shipped", "tracking": "1Z999"},
         "mocked": True, "mock_key": "lookup_order:1", "is_error": False, "outcome": "mock"}
    ]
    assert order["trace"]["mock_stats"] == {"hits": 1, "misses": 0, "per_mock": {"lookup_order:1": 1}}
    denied = results["mcp-strict-denial"]["trace"]["tool_calls"][0]
    assert denied["tool"] == "refund_order"
    assert denied["is_error"]
    assert not denied["mocked"]
    assert "tool call denied" in denied["output"]


def test_the_stdio_bridge_relays_to_the_sample_server(tmp_path):
    """An agent that starts its server itself, from OMK_MCP_STDIO_CONFIG: the same tools and answers."""
    sample = Sample("s1", 'call lookup_order {"order_id": "A1001"}\ncall nothing_here', base_dir=tmp_path, mocks=[
        {"tool": "lookup_order", "description": "Look up an order.", "return": {"status": "shipped"}}
    ])

    async def go():
        target = make_target("cmd:python -m omk.testing.mcp_agent --stdio", base_dir=tmp_path, settings=MCP)
        try:
            return await target.run(sample, sample.prompt)
        finally:
            await target.close()

    result = asyncio.run(go())
    assert result.output.splitlines()[:2] == ["tools: lookup_order", 'lookup_order: {"status":"shipped"}']
    assert result.output.splitlines()[2].startswith("nothing_here (error): [omk] no mock or tool is available")
    assert [(c.tool, c.mocked, c.is_error) for c in result.trace.tool_calls] == [("lookup_order", True, False), ("nothing_here", False, True)]


def test_strict_denial_is_an_mcp_error_and_recorded_denied(tmp_path):
    report = evaluate(tmp_path, [{"sample_id": "s1", "prompt": "who?", "mocksStrict": True, "mocks": [{"tool": "other", "return": "x"}]}])
    result = report.results[0]
    assert result.output.startswith("(error) [omk] tool call denied: no mock matches this whoami call")
    (call,) = result.trace.tool_calls
    assert (call.tool, call.input, call.is_error, call.mocked) == ("whoami", {"asker": "s1"}, True, False)
    assert result.trace.mock_stats.misses == 1


def test_a_conversation_keeps_one_server_across_turns(tmp_path):
    mocks = [{"tool": "whoami", "return_seq": ["first", "second"]}]
    chat = {"sample_id": "chat", "mocks": mocks, "turns": [{"prompt": "one"}, {"prompt": "two"}]}
    report = evaluate(tmp_path, [chat, whoami("probe", prompt="probe chat")], concurrency=1)
    result, probe = report.results
    assert [t.output for t in result.turns] == ["first", "second"]
    first, second = urls(tmp_path, "chat")
    assert first == second  # one server, one token, for both turns
    assert probe.output == "refused"  # and gone once the conversation is over, while the run goes on
    history = json.loads((tmp_path / "chat.messages").read_text())  # turn 2 sees turn 1's MCP call
    assert history[1:3] == [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "mcp_1", "tool": "whoami", "input": {"asker": "chat"}}]},
        {"role": "tool", "tool_call_id": "mcp_1", "tool": "whoami", "content": "first", "is_error": False},
    ]


def test_a_conversation_that_ends_early_stops_its_server(tmp_path):
    """Turn 1 fails (no retry), so the last turn is never sent: the server still ends with the conversation."""
    turns = [{"prompt": "one"}, {"prompt": "fail"}, {"prompt": "three"}]
    chat = {"sample_id": "chat", "mocks": [{"tool": "whoami", "return": "me"}], "turns": turns}
    report = evaluate(tmp_path, [chat, whoami("probe", prompt="probe chat")], retries=0, concurrency=1)
    result, probe = report.results
    assert [t.status for t in result.turns] == ["ok", "error", "skipped"]
    first, second = urls(tmp_path, "chat")
    assert first == second
    assert probe.output == "refused"  # gone when the conversation stopped, not at the end of the run


def test_ctrl_c_leaves_no_listener(tmp_path):
    path = write_samples(tmp_path, [whoami("slow", prompt="sleep")])
    (tmp_path / "omk.yaml").write_text(f"target: cmd:{sys.executable} agent.py\ncmd:\n  mcp: true\n", encoding="utf-8")
    # not run_omk: the run is interrupted while it works, so Popen
    proc = subprocess.Popen([sys.executable, "-m", "omk", "eval", str(path), "--no-cache", "--out", str(tmp_path / "run")], cwd=tmp_path)
    try:
        marker = tmp_path / "slow.url"
        while not (marker.exists() and marker.read_text().endswith("\n")):  # the agent has its endpoint
            assert proc.poll() is None
            time.sleep(0.05)
        (url,) = urls(tmp_path, "slow")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) != 0
    finally:
        proc.kill()
    assert refused(url)


def test_eight_at_once_each_sample_answered_by_its_own_mocks(tmp_path):
    ids = [f"s{i:02d}" for i in range(16)]
    report = evaluate(tmp_path, [whoami(i, mocksStrict=True) for i in ids], concurrency=8)
    assert {r.sample_id: r.output for r in report.results} == {i: f"I am {i}" for i in ids}
    for r in report.results:
        assert [(c.input, c.output) for c in r.trace.tool_calls] == [({"asker": r.sample_id}, f"I am {r.sample_id}")]
    endpoints = [urls(tmp_path, i)[0] for i in ids]
    assert len(set(endpoints)) == len(ids)
    assert all(refused(url) for url in endpoints)


def test_the_server_is_gone_after_a_timeout(tmp_path):
    report = evaluate(tmp_path, [whoami("slow", prompt="sleep")], timeout=3, retries=0)
    assert report.results[0].status == "error"
    assert "timed out" in report.results[0].error
    (url,) = urls(tmp_path, "slow")
    assert refused(url)


def test_the_endpoint_never_reaches_a_report_unmasked(tmp_path):
    report = evaluate(tmp_path, [whoami("s1", prompt="echo")])
    (url,) = urls(tmp_path, "s1")
    token = urlsplit(url).path.split("/")[1]
    output = report.results[0].output
    assert output == "I am s1 endpoint [redacted]"
    assert token not in output
    assert token not in repr(report.results[0].trace)


def test_a_request_without_the_token_is_refused(tmp_path):
    sample = Sample("s1", "p", base_dir=tmp_path, mocks=[
        {"tool": "lookup_order", "description": "Look up an order.", "input_schema": {"type": "object", "required": ["order_id"]}, "return": "ok"}
    ])

    async def go():
        a, b = (McpSandboxServer(MockSandbox.for_sample(sample), offered_tools(sample)) for _ in range(2))
        await a.start()
        await b.start()
        try:
            port = urlsplit(a.url).port
            token_b = urlsplit(b.url).path.split("/")[1]
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
            headers = {"accept": "application/json, text/event-stream"}
            async with httpx.AsyncClient() as http:
                for path in ("/mcp", "/", f"/{token_b}/mcp", f"/{a.token}", f"/{a.token}/mcp/x", f"/x{a.token}/mcp"):
                    reply = await http.post(f"http://127.0.0.1:{port}{path}", json=body, headers=headers)
                    assert reply.status_code == 404, path
                # the right path under a name that is not loopback (DNS rebinding): refused by the SDK
                reply = await http.post(a.url, json=body, headers={**headers, "host": "attacker.example"})
                assert reply.status_code in (403, 421), reply.status_code
            from mcp import Client

            async with Client(a.url) as client:  # with the token: served
                (tool,) = (await client.list_tools()).tools
            return tool
        finally:
            await a.stop()
            await b.stop()

    tool = asyncio.run(go())
    assert (tool.name, tool.description, tool.input_schema) == ("lookup_order", "Look up an order.", {"type": "object", "required": ["order_id"]})


def test_a_program_timing_out_in_the_target_leaves_no_listener(tmp_path):
    write_samples(tmp_path, [])
    sample = Sample("t1", "sleep", base_dir=tmp_path, mocks=[{"tool": "whoami", "return": "me"}])

    async def go():
        target = make_target(f"cmd:{sys.executable} agent.py", base_dir=tmp_path, settings=MCP)
        target.timeout = 3
        try:
            with pytest.raises(TargetError, match="timed out"):
                await target.run(sample, sample.prompt)
        finally:
            await target.close()

    asyncio.run(go())
    (url,) = urls(tmp_path, "t1")
    assert refused(url)


def test_without_the_mcp_extra_omk_says_so_in_one_line(tmp_path):
    code = textwrap.dedent(
        """
        import sys
        sys.modules["mcp"] = None  # as if omk[mcp] were not installed
        from omk.cli.main import main
        sys.exit(main(["eval", "samples/mcp-agent/eval-samples.yaml", "--no-cache", "--out", sys.argv[1]]))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "target 'cmd:python -m omk.testing.mcp_agent' with cmd.mcp needs the MCP SDK, an optional part of omk: pip install 'omk[mcp]'"
    ]


def test_a_bad_input_schema_is_a_load_error(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("samples:\n  - sample_id: a\n    prompt: p\n    mocks:\n      - {tool: t, return: x, input_schema: {type: string}}\n")
    proc = run_omk(
        "eval", str(path), "--target", "replay:none.jsonl",
        cwd=tmp_path, drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "mocks[0].input_schema" in proc.stderr


def test_serving_over_mcp_is_part_of_the_cache_key(tmp_path):
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    plain = make_target(f"cmd:{sys.executable} agent.py", base_dir=tmp_path).cache_identity()
    served = make_target(f"cmd:{sys.executable} agent.py", base_dir=tmp_path, settings=MCP).cache_identity()
    assert plain != served


def _logging_state() -> list[tuple]:
    import logging

    names = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi", "mcp", "mcp.server")
    return [(n, logging.getLogger(n).level, logging.getLogger(n).propagate, list(logging.getLogger(n).handlers), list(logging.getLogger(n).filters)) for n in names]


def test_a_sandbox_leaves_the_process_logging_as_it_was_and_never_logs_its_token(tmp_path, caplog):
    """Starting and stopping the server changes no logger's level, handlers or propagation (a
    library call leaves process-wide state alone); with the caller's logging open at DEBUG, no
    line it keeps names the server's token (the access log would: the path holds it)."""
    import logging

    sample = Sample("s1", "p", base_dir=tmp_path, mocks=[{"tool": "lookup_order", "return": "ok"}])
    before = _logging_state()

    async def go() -> str:
        server = McpSandboxServer(MockSandbox.for_sample(sample), offered_tools(sample))
        await server.start()
        try:
            from mcp import Client

            async with Client(server.url) as client:
                await client.call_tool("lookup_order", {})
            return server.token
        finally:
            await server.stop()

    with caplog.at_level(logging.DEBUG):
        token = asyncio.run(go())
    assert _logging_state() == [(n, lv, pr, hs, fs) for n, lv, pr, hs, fs in before]
    served = [r for r in caplog.records if r.name.startswith(("uvicorn", "mcp.server"))]  # the client's own lines are the test's
    assert served, "the server logged nothing at DEBUG: the check below would prove nothing"
    assert not [r.getMessage() for r in served if token in r.getMessage()]
