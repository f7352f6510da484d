"""The real targets through `omk eval` as a subprocess: the bundled demo agent over the command
protocol, and `openai:` against a loopback server, with the run folder grepped for the key."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from cli_support import run_omk

from omk.testing import ModelServer
from omk.testing.openai_chat import text_reply, tool_call_reply

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-e2e-7d3f0a9c1b2e4f6a8c0d"


def omk_eval(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "OMK_"))}
    full_env.update(env or {})
    return run_omk("eval", *args, "--quiet", cwd=cwd, base=full_env, drop=(), columns=None, timeout=120)


def test_bundled_samples_pass_with_the_demo_agent(tmp_path):
    samples = tmp_path / "samples"
    shutil.copytree(ROOT / "samples", samples, ignore=shutil.ignore_patterns(".omk", "omk.yaml"))
    out = tmp_path / "run"
    proc = omk_eval(
        ["eval-samples.yaml", "--target", "cmd:python agents/support_agent.py", "--no-judge", "--out", str(out)],
        cwd=samples,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["target"]["kind"] == "cmd"
    results = {r["sample_id"]: r for r in report["results"]}
    assert all(r["status"] == "ok" and r["passed"] for r in results.values()), [
        (r["sample_id"], r["error"]) for r in results.values() if not r["passed"]
    ]
    refund = results["cs-refund-zh"]["trace"]
    assert [c["mock_key"] for c in refund["tool_calls"]] == ["lookup_order:1", "issue_refund:1"]
    assert refund["mock_stats"] == {"hits": 2, "misses": 0, "per_mock": {"lookup_order:1": 1, "issue_refund:1": 1}}
    order = results["cs-order-status-en"]["trace"]["tool_calls"][0]
    assert order["output"]["tracking"] == "JD0146 2281 93"  # from fixtures/order-A1001.json via return_file
    mock_hits = [a for a in results["cs-order-status-en"]["assertions"] if a["type"] == "mock_hit"]
    assert [a["status"] for a in mock_hits] == ["passed", "passed"]


def test_openai_target_end_to_end_without_leaking_the_key(tmp_path):
    sample_file = tmp_path / "eval-samples.yaml"
    sample_file.write_text(
        yaml.safe_dump(
            {
                "samples": [
                    {
                        "sample_id": "order",
                        "prompt": "Where is order A1001?",
                        "mocks": [
                            {"tool": "lookup_order", "match": {"input": {"order_id": "A1001"}}, "return": {"status": "shipped"}}
                        ],
                        "mocksStrict": True,
                        "assertions": [
                            {"type": "tools_called", "values": ["lookup_order"]},
                            {"type": "mock_hit", "value": "lookup_order:1"},
                            {"type": "contains", "value": "shipped"},
                            {"type": "cost_max", "value": 0.01},
                        ],
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    (tmp_path / "omk.yaml").write_text("target: openai:gpt-4o-mini\nsystem: You are Nova.\n", encoding="utf-8")

    def responder(request):
        has_result = any(m.get("role") == "tool" for m in request.json["messages"])
        if has_result:
            return text_reply("It has shipped.", prompt_tokens=200, completion_tokens=20)
        return tool_call_reply([("lookup_order", {"order_id": "A1001"})], prompt_tokens=100, completion_tokens=10)

    out = tmp_path / "run"
    with ModelServer.for_openai(responder) as fake:
        env = {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": SECRET}
        proc = omk_eval(["eval-samples.yaml", "--out", str(out)], cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert len(fake.requests) == 2
        assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in fake.requests)
        second = omk_eval(["eval-samples.yaml", "--out", str(tmp_path / "run2")], cwd=tmp_path, env=env)
        assert second.returncode == 0
        assert len(fake.requests) == 2  # the cache answered
    result = json.loads((out / "report.json").read_text(encoding="utf-8"))["results"][0]
    assert result["trace"]["tokens"] == {"input": 300, "output": 30}
    assert result["trace"]["cost_usd"] == pytest.approx((300 * 0.15 + 30 * 0.60) / 1e6)
    assert result["trace"]["mock_stats"]["per_mock"] == {"lookup_order:1": 1}
    for folder in (out, tmp_path / "run2", tmp_path / ".omk"):
        for path in folder.rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in proc.stdout + proc.stderr


def test_missing_key_stops_before_the_run(tmp_path):
    (tmp_path / "eval-samples.yaml").write_text("samples:\n  - {sample_id: a, prompt: hi}\n", encoding="utf-8")
    proc = omk_eval(["eval-samples.yaml", "--target", "openai:gpt-4o", "--out", str(tmp_path / "r")], cwd=tmp_path)
    assert proc.returncode == 2
    assert "set OPENAI_API_KEY" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_readme_command_runs_the_bundled_default(tmp_path):
    """`omk eval samples/eval-samples.yaml` with the bundled omk.yaml exits 0 offline."""
    proc = omk_eval([str(ROOT / "samples" / "eval-samples.yaml"), "--out", str(tmp_path / "run")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
