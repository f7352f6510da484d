"""Conversations end to end through `omk eval` (a real subprocess): the OpenAI and Anthropic
fake servers on 127.0.0.1 (each turn carries the earlier turns, tool exchanges included), a
`cmd:` agent, replay, a failing turn, a retried turn, the cache and the judge's view."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cli_support import run_omk

from omk.testing import HttpError, ModelServer
from omk.testing.anthropic import text_reply as anthropic_text
from omk.testing.anthropic import tool_use_reply
from omk.testing.openai_chat import text_reply, tool_call_reply

ROOT = Path(__file__).resolve().parent.parent
JUDGE = ROOT / "tests" / "judges" / "scripted_judge.py"

PROMPTS = ["Hi, where is my order A1001?", "Could you check it once more?", "Thanks, that's all."]

CONVERSATION = {
    "sample_id": "order-chat",
    "mocks": [
        {
            "tool": "lookup_order",
            "match": {"input": {"order_id": "A1001"}},
            "return_seq": [{"status": "processing"}, {"status": "shipped"}],
        }
    ],
    "mocksStrict": True,
    "assertions": [{"type": "not_contains", "value": "as an AI"}],  # every turn
    "turns": [
        {
            "prompt": PROMPTS[0],
            "assertions": [
                {"type": "contains", "value": "processing"},
                {"type": "mock_hit", "value": "lookup_order:1"},
            ],
        },
        {
            "prompt": PROMPTS[1],
            "assertions": [{"type": "contains", "value": "shipped"}, {"type": "tools_called", "values": ["lookup_order"]}],
        },
        {"prompt": PROMPTS[2], "assertions": [{"type": "contains", "value": "welcome"}]},
    ],
}


def write_samples(folder: Path, *samples: dict) -> Path:
    path = folder / "eval-samples.yaml"
    path.write_text(yaml.safe_dump({"samples": list(samples)}, allow_unicode=True), encoding="utf-8")
    return path


def omk_eval(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "OMK_"))}
    full_env.update({"NO_COLOR": "1", "COLUMNS": "200", "OMK_RETRY_BASE_S": "0", **(env or {})})
    return run_omk("eval", *args, cwd=cwd, base=full_env, drop=(), columns=None, timeout=120)


def report_of(out: Path) -> dict:
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def user_turn(messages: list[dict]) -> int:
    """Which conversation turn (1-based) a request belongs to: its user messages that are text."""
    return sum(1 for m in messages if m["role"] == "user" and isinstance(m["content"], str))


def check_report(result: dict) -> None:
    """What every target must give for CONVERSATION: the same report contract."""
    assert result["status"] == "ok" and result["passed"] is True, result
    turns = result["turns"]
    assert [t["index"] for t in turns] == [0, 1, 2]
    assert [t["prompt"] for t in turns] == PROMPTS
    for t in turns:
        assert set(t) >= {"index", "prompt", "output", "trace", "assertions", "judge", "scores", "passed", "status"}
        assert t["status"] == "ok"
        assert t["passed"] is True
        assert t["assertions"][0]["type"] == "not_contains"  # the sample's assertions run on every turn
    assert [len(t["assertions"]) for t in turns] == [3, 3, 2]
    first, second, third = (t["trace"] for t in turns)
    # one sandbox for the conversation: return_seq goes on where turn 1 left it
    assert [c["output"] for c in first["tool_calls"]] == [{"status": "processing"}]
    assert [c["output"] for c in second["tool_calls"]] == [{"status": "shipped"}]
    assert third["tool_calls"] == []
    assert first["mock_stats"] == {"hits": 1, "misses": 0, "per_mock": {"lookup_order:1": 1}}  # per turn
    assert second["mock_stats"] == {"hits": 1, "misses": 0, "per_mock": {"lookup_order:1": 1}}
    whole = result["trace"]
    assert whole["mock_stats"] == {"hits": 2, "misses": 0, "per_mock": {"lookup_order:1": 2}}
    assert [c["output"]["status"] for c in whole["tool_calls"]] == ["processing", "shipped"]
    assert result["assertions"] == []
    assert result["prompt"] == PROMPTS[0]
    assert result["output"] == turns[2]["output"]
    assert result["scores"] == {"fact": 5.0, "behavior": 5.0, "judge": None, "composite": 5.0}


def test_openai_gets_the_history_on_turns_two_and_three(tmp_path):
    write_samples(tmp_path, CONVERSATION)

    def responder(request):
        messages = request.json["messages"]
        last = messages[-1]
        if last["role"] == "tool":
            status = json.loads(last["content"])["status"]
            return text_reply(f"Order A1001 is {status}.", prompt_tokens=20, completion_tokens=5)
        if user_turn(messages) < 3:
            return tool_call_reply([("lookup_order", {"order_id": "A1001"})], prompt_tokens=10, completion_tokens=2)
        return text_reply("You're welcome!", prompt_tokens=30, completion_tokens=3)

    out = tmp_path / "run"
    with ModelServer.for_openai(responder) as fake:
        env = {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test"}
        proc = omk_eval(["eval-samples.yaml", "--target", "openai:gpt-4o-mini", "--out", str(out)], tmp_path, env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        requests = [r.json for r in fake.requests]
        assert len(requests) == 5  # turn 1: call + answer, turn 2: call + answer, turn 3: answer
        again = omk_eval(["eval-samples.yaml", "--target", "openai:gpt-4o-mini", "--out", str(tmp_path / "r2")], tmp_path, env)
        assert again.returncode == 0
        assert len(fake.requests) == 5  # the whole conversation came from the cache
    assert report_of(tmp_path / "r2")["results"][0]["cached"] is True

    turn2 = requests[2]["messages"]  # the first request of turn 2
    assert [m["role"] for m in turn2] == ["user", "assistant", "tool", "assistant", "user"]
    assert turn2[0]["content"] == PROMPTS[0]
    assert turn2[-1]["content"] == PROMPTS[1]
    call = turn2[1]["tool_calls"][0]
    assert call["function"]["name"] == "lookup_order"
    assert json.loads(call["function"]["arguments"]) == {"order_id": "A1001"}
    assert turn2[2] == {"role": "tool", "tool_call_id": call["id"], "content": '{"status":"processing"}'}
    assert turn2[3] == {"role": "assistant", "content": "Order A1001 is processing."}
    turn3 = requests[4]["messages"]
    assert [m["role"] for m in turn3] == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant", "user"]
    assert turn3[6]["content"] == '{"status":"shipped"}'
    assert turn3[7]["content"] == "Order A1001 is shipped."
    assert turn3[-1]["content"] == PROMPTS[2]

    result = report_of(out)["results"][0]
    check_report(result)
    assert [t["trace"]["tokens"] for t in result["turns"]] == [
        {"input": 30, "output": 7},
        {"input": 30, "output": 7},
        {"input": 30, "output": 3},
    ]
    assert result["trace"]["tokens"] == {"input": 90, "output": 17}
    assert "turn 2: Could you check it once more?" in proc.stdout  # the terminal shows every turn


def test_anthropic_gets_the_history_on_turns_two_and_three(tmp_path):
    write_samples(tmp_path, CONVERSATION)

    def responder(request):
        messages = request.json["messages"]
        last = messages[-1]
        if isinstance(last["content"], list) and last["content"][0]["type"] == "tool_result":
            status = json.loads(last["content"][0]["content"])["status"]
            return anthropic_text(f"Order A1001 is {status}.")
        if user_turn(messages) < 3:
            return tool_use_reply([("lookup_order", {"order_id": "A1001"})], text="Let me look.")
        return anthropic_text("You're welcome!")

    out = tmp_path / "run"
    with ModelServer(responder) as fake:
        env = {"ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-ant-test"}
        proc = omk_eval(["eval-samples.yaml", "--target", "anthropic:claude-x", "--out", str(out)], tmp_path, env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        requests = [r.json for r in fake.requests]
    assert len(requests) == 5
    turn2 = requests[2]["messages"]
    assert [m["role"] for m in turn2] == ["user", "assistant", "user", "assistant", "user"]
    assert turn2[1]["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_0", "name": "lookup_order", "input": {"order_id": "A1001"}},
    ]
    assert turn2[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_0", "content": '{"status":"processing"}', "is_error": False}
    ]
    assert turn2[3]["content"] == [{"type": "text", "text": "Order A1001 is processing."}]
    assert turn2[4]["content"] == PROMPTS[1]
    turn3 = requests[4]["messages"]
    assert [m["role"] for m in turn3] == ["user", "assistant", "user", "assistant"] * 2 + ["user"]
    assert turn3[6]["content"][0]["content"] == '{"status":"shipped"}'
    assert turn3[-1]["content"] == PROMPTS[2]
    check_report(report_of(out)["results"][0])


AGENT = r'''
import json, sys
request = json.loads(sys.stdin.readline())
with open("requests.jsonl", "a", encoding="utf-8") as f:
    f.write(json.dumps(request, ensure_ascii=False) + "\n")
turn = request["turn"]["index"]
if turn < 2:
    print(json.dumps({"type": "tool_call", "id": f"c{turn}", "tool": "lookup_order", "input": {"order_id": "A1001"}}), flush=True)
    status = json.loads(json.loads(sys.stdin.readline())["output"])["status"]
    output = f"Order A1001 is {status}."
else:
    output = "You're welcome!"
print(json.dumps({"type": "response", "output": output, "cost_usd": 0.001}), flush=True)
'''


def test_cmd_agent_gets_the_history_and_the_turn(tmp_path):
    write_samples(tmp_path, CONVERSATION)
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    out = tmp_path / "run"
    proc = omk_eval(["eval-samples.yaml", "--target", "cmd:python agent.py", "--out", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    requests = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["turn"] for r in requests] == [{"index": i, "count": 3} for i in range(3)]  # one process per turn
    assert [r["prompt"] for r in requests] == PROMPTS
    assert requests[0]["messages"] == [{"role": "user", "content": PROMPTS[0]}]
    assert requests[1]["messages"] == [
        {"role": "user", "content": PROMPTS[0]},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "tool": "lookup_order", "input": {"order_id": "A1001"}}]},
        {"role": "tool", "tool_call_id": "c0", "tool": "lookup_order", "content": '{"status":"processing"}', "is_error": False},
        {"role": "assistant", "content": "Order A1001 is processing."},
        {"role": "user", "content": PROMPTS[1]},
    ]
    assert requests[2]["messages"][:5] == requests[1]["messages"]
    assert [m["role"] for m in requests[2]["messages"][5:]] == ["assistant", "tool", "assistant", "user"]
    result = report_of(out)["results"][0]
    check_report(result)
    assert result["trace"]["cost_usd"] == pytest.approx(0.003)


def test_replay_of_recorded_turns_maps_to_the_same_report(tmp_path):
    write_samples(tmp_path, CONVERSATION)

    def call(status: str) -> dict:
        return {"tool": "lookup_order", "input": {"order_id": "A1001"}, "output": {"status": status}, "mocked": True, "mock_key": "lookup_order:1"}

    stats = {"hits": 1, "misses": 0, "per_mock": {"lookup_order:1": 1}}
    record = {
        "sample_id": "order-chat",
        "turns": [
            {"output": "Order A1001 is processing.", "trace": {"turns": 2, "tool_calls": [call("processing")], "mock_stats": stats}},
            {"output": "Order A1001 is shipped.", "trace": {"turns": 2, "tool_calls": [call("shipped")], "mock_stats": stats}},
            {"output": "You're welcome!", "trace": {"turns": 1, "tool_calls": [], "mock_stats": {"hits": 0, "misses": 0}}},
        ],
    }
    (tmp_path / "r.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    proc = omk_eval(["eval-samples.yaml", "--target", "replay:r.jsonl", "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check_report(report_of(out)["results"][0])


def test_a_failed_turn_errors_the_sample_and_keeps_the_earlier_turns(tmp_path):
    write_samples(tmp_path, CONVERSATION, {"sample_id": "single", "prompt": "hello", "assertions": [{"type": "contains", "value": "hi"}]})
    record = {
        "sample_id": "order-chat",
        "turns": [{"output": "Order A1001 is processing.", "trace": {"mock_stats": {"hits": 1, "per_mock": {"lookup_order:1": 1}}}}, {"error": "agent crashed"}],
    }
    lines = [json.dumps(record), json.dumps({"sample_id": "single", "output": "hi there"})]
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    proc = omk_eval(["eval-samples.yaml", "--target", "replay:r.jsonl", "--out", str(out), "--format", "json,junit,md,html"], tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = report_of(out)
    conv, single = report["results"]
    assert single["status"] == "ok"
    assert single["passed"] is True  # the run went on
    assert conv["status"] == "error"
    assert conv["passed"] is False
    assert conv["error"] == "turn 2: recorded error: agent crashed"
    assert [t["status"] for t in conv["turns"]] == ["ok", "error", "skipped"]
    kept = conv["turns"][0]
    assert kept["output"] == "Order A1001 is processing."
    assert kept["passed"] is True
    assert len(kept["assertions"]) == 3
    assert conv["turns"][2]["output"] is None
    assert conv["turns"][2]["prompt"] == PROMPTS[2]
    assert report["summary"]["errored"] == 1
    assert report["summary"]["total"] == 2
    assert "error: turn 2: recorded error: agent crashed" in proc.stdout
    assert "↳ turn 3: Thanks, that's all." in proc.stdout
    junit = (out / "junit.xml").read_text(encoding="utf-8")
    assert "--- turn 1 (passed)" in junit
    assert "(not sent: an earlier turn failed)" in junit
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert "| ↳ turn 3: Thanks, that's all. | skipped |" in md
    assert "turn 2: error: recorded error: agent crashed" in md  # the failures table, from the shared reasons
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.count('<section class="turn"') == 3


def test_a_turn_is_retried_with_the_mocks_as_the_turn_began(tmp_path):
    write_samples(tmp_path, CONVERSATION)
    failed = {"done": False}

    def responder(request):
        messages = request.json["messages"]
        last = messages[-1]
        if last["role"] == "tool":
            status = json.loads(last["content"])["status"]
            if user_turn(messages) == 2 and not failed["done"]:
                failed["done"] = True  # turn 2 fails after its tool call: the retry runs the turn again
                return HttpError(503)
            return text_reply(f"Order A1001 is {status}.")
        if user_turn(messages) < 3:
            return tool_call_reply([("lookup_order", {"order_id": "A1001"})])
        return text_reply("You're welcome!")

    out = tmp_path / "run"
    with ModelServer.for_openai(responder) as fake:
        env = {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test"}
        proc = omk_eval(["eval-samples.yaml", "--target", "openai:m", "--out", str(out), "--no-cache"], tmp_path, env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert len(fake.requests) == 7
    result = report_of(out)["results"][0]
    check_report(result)  # the retried turn 2 still got "shipped", not a third return_seq step
    assert [t["attempts"] for t in result["turns"]] == [1, 2, 1]
    assert result["attempts"] == 4


def test_the_judge_sees_the_conversation_so_far(tmp_path):
    sample = {
        "sample_id": "chat-zh",
        "rubric": "语气礼貌",
        "turns": [
            {"prompt": "你好，我的耳机坏了。"},
            {"prompt": "能退款吗？", "dimensions": {"准确": "说明退款条件"}},
        ],
    }
    write_samples(tmp_path, sample)
    record = {"sample_id": "chat-zh", "turns": [{"output": "您好，很抱歉。"}, {"output": "可以，七天内可退。"}]}
    (tmp_path / "r.jsonl").write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    seen = tmp_path / "judge.jsonl"
    judge = f"cmd:{sys.executable} {JUDGE} echo-file {seen}"
    out = tmp_path / "run"
    proc = omk_eval(["eval-samples.yaml", "--target", "replay:r.jsonl", "--judge", judge, "--lang", "zh", "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    prompts = [json.loads(line)["prompt"] for line in seen.read_text(encoding="utf-8").splitlines()]
    assert len(prompts) == 3  # turn 1: rubric; turn 2: rubric and one dimension
    first = [p for p in prompts if "此前的对话" not in p]
    later = [p for p in prompts if "此前的对话" in p]
    assert len(first) == 1
    assert len(later) == 2
    assert "你好，我的耳机坏了。" in first[0]
    assert "您好，很抱歉。" in first[0]
    for p in later:
        assert "【用户】 你好，我的耳机坏了。" in p
        assert "【助手】 您好，很抱歉。" in p
        assert p.index("本轮") < p.index("能退款吗？") < p.index("可以，七天内可退。")
    result = report_of(out)["results"][0]
    assert [t["judge"]["score"] for t in result["turns"]] == [4.0, 4.0]
    assert result["turns"][1]["judge"]["dimensions"]["准确"]["score"] == 4
    assert result["scores"]["judge"] == 4.0
    assert result["judge"] is None


def test_resume_keeps_the_finished_conversation_with_its_turns(tmp_path):
    chat = {**CONVERSATION, "rubric": "polite"}  # no judge: one skipped judge item per turn
    write_samples(tmp_path, chat, {"sample_id": "single", "prompt": "hello", "assertions": [{"type": "contains", "value": "hi"}]})
    record = {
        "sample_id": "order-chat",
        "turns": [{"output": "Order A1001 is processing."}, {"output": "It is shipped."}, {"output": "Welcome!"}],
    }
    lines = [json.dumps(record), json.dumps({"sample_id": "single", "output": "hi there"})]
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    first = omk_eval(["eval-samples.yaml", "--target", "replay:r.jsonl", "--out", str(out)], tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr  # turn 1 and 2 miss their mock_hit / tools_called
    before = report_of(out)
    stored = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    (out / "results.jsonl").write_text(next(line for line in stored if '"order-chat"' in line) + "\n", encoding="utf-8")
    resumed = omk_eval(["--resume", str(out)], tmp_path)
    assert resumed.returncode == 1, resumed.stdout + resumed.stderr
    after = report_of(out)
    assert after["results"][0] == before["results"][0]
    assert len(after["results"][0]["turns"]) == 3
    assert after["summary"]["skipped_judge_items"] == before["summary"]["skipped_judge_items"] == 3
    assert after["summary"]["scores"] == before["summary"]["scores"]
