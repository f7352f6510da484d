"""The scripted model server (omk.testing, `omk serve-model`): a tool-calling round trip in each
API, streamed and not, read by role and ids; the script's errors; the command line; and the
offline dry run of the bundled Claude Code example exactly as docs/targets.md gives it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from claude_support import require_claude
from cli_support import run_omk
from codex_support import require_codex

from omk.core.errors import ConfigError
from omk.testing import load_script

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
model: scripted-test
usage: {input_tokens: 7, output_tokens: 3}
rules:
  - when: weather in (\\w+)
    tools:
      - get_weather: {city: Paris}
      - [{get_time: {zone: CET}}, {get_date: {}}]
    answer: Sunny, 21 degrees.
  - answer: I only know the weather.
"""
PROMPT = "What is the weather in Paris?"


def parse_sse(text: str) -> list[Any]:
    data = [line[len("data: "):] for line in text.splitlines() if line.startswith("data: ")]
    return [json.loads(d) for d in data if d != "[DONE]"]


# --- each API: a request, and what the model said, as (text, [(call id, name, input)]) ---------------


def anthropic_turn(url: str, messages: list[dict[str, Any]], stream: bool) -> tuple[str, list[tuple[str, str, Any]]]:
    reply = httpx.post(f"{url}/v1/messages", json={"model": "m", "messages": messages, "stream": stream, "max_tokens": 100})
    assert reply.status_code == 200, reply.text
    if not stream:
        blocks = reply.json()["content"]
    else:
        events = parse_sse(reply.text)
        assert events[0]["type"] == "message_start"
        assert events[-1]["type"] == "message_stop"
        blocks = []
        for event in events:
            if event["type"] == "content_block_start":
                blocks.append(dict(event["content_block"]))
            elif event["type"] == "content_block_delta":
                delta = event["delta"]
                if delta["type"] == "text_delta":
                    blocks[-1]["text"] += delta["text"]
                else:
                    blocks[-1]["input"] = json.loads(delta["partial_json"])
    text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
    return text, [(b["id"], b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"]


def chat_turn(url: str, messages: list[dict[str, Any]], stream: bool) -> tuple[str, list[tuple[str, str, Any]]]:
    reply = httpx.post(f"{url}/v1/chat/completions", json={"model": "m", "messages": messages, "stream": stream})
    assert reply.status_code == 200, reply.text
    if not stream:
        message = reply.json()["choices"][0]["message"]
        text, calls = message.get("content") or "", message.get("tool_calls") or []
    else:
        chunks = parse_sse(reply.text)
        assert reply.text.rstrip().endswith("data: [DONE]")
        deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
        text = "".join(d.get("content") or "" for d in deltas)
        calls = [call for d in deltas for call in d.get("tool_calls") or []]
    return text, [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


def responses_turn(url: str, items: list[dict[str, Any]], stream: bool) -> tuple[str, list[tuple[str, str, Any]]]:
    reply = httpx.post(f"{url}/v1/responses", json={"model": "m", "input": items, "stream": stream})
    assert reply.status_code == 200, reply.text
    if not stream:
        output = reply.json()["output"]
    else:
        events = parse_sse(reply.text)
        assert events[0]["type"] == "response.created"
        assert events[-1]["type"] == "response.completed"
        output = [e["item"] for e in events if e["type"] == "response.output_item.done"]
        deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
        assert deltas == "".join(p["text"] for i in output if i["type"] == "message" for p in i["content"])
    text = "".join(p["text"] for i in output if i["type"] == "message" for p in i["content"])
    return text, [(i["call_id"], i["name"], json.loads(i["arguments"])) for i in output if i["type"] == "function_call"]


def anthropic_results(calls: list[tuple[str, str, Any]]) -> list[dict[str, Any]]:
    uses = [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    results = [{"type": "tool_result", "tool_use_id": i, "content": f"{n} done"} for i, n, _ in calls]
    # Claude Code adds a reminder beside the results and a system-role message after them
    return [{"role": "assistant", "content": uses}, {"role": "user", "content": [*results, {"type": "text", "text": "<system-reminder>x</system-reminder>"}]},
            {"role": "system", "content": "appended by the client"}]


def chat_results(calls: list[tuple[str, str, Any]]) -> list[dict[str, Any]]:
    asked = [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}} for i, n, a in calls]
    return [{"role": "assistant", "content": None, "tool_calls": asked}, *({"role": "tool", "tool_call_id": i, "content": "done"} for i, _, _ in calls)]


def responses_results(calls: list[tuple[str, str, Any]]) -> list[dict[str, Any]]:
    asked = [{"type": "function_call", "call_id": i, "name": n, "arguments": json.dumps(a)} for i, n, a in calls]
    return [*asked, *({"type": "function_call_output", "call_id": i, "output": "done"} for i, _, _ in calls)]


APIS = {
    "anthropic": (anthropic_turn, lambda p: [{"role": "user", "content": [{"type": "text", "text": "<system-reminder>skills: weather in Rome</system-reminder>"}, {"type": "text", "text": p}]}], anthropic_results),
    "chat": (chat_turn, lambda p: [{"role": "system", "content": "be brief"}, {"role": "user", "content": p}], chat_results),
    "responses": (responses_turn, lambda p: [{"role": "user", "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]}, {"role": "user", "content": [{"type": "input_text", "text": p}]}], responses_results),
}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("api", sorted(APIS))
def test_a_tool_calling_round_trip_in_each_api(api, stream, scripted_model, tmp_path):
    (tmp_path / "model.yaml").write_text(SCRIPT, encoding="utf-8")
    server = scripted_model(tmp_path / "model.yaml")
    turn, opening, answer = APIS[api]
    conversation = opening(PROMPT)
    text, first = turn(server.root, conversation, stream)
    assert text == ""
    assert [(n, a) for _, n, a in first] == [("get_weather", {"city": "Paris"})]
    conversation += answer(first)
    text, second = turn(server.root, conversation, stream)
    assert [(n, a) for _, n, a in second] == [("get_time", {"zone": "CET"}), ("get_date", {})]  # two calls in one turn
    assert len({i for i, _, _ in first + second}) == 3  # every call its own id
    assert [n for _, n, _ in turn(server.root, conversation, stream)[1]] == ["get_time", "get_date"]  # asked again: the same turn
    conversation += answer(second)
    text, last = turn(server.root, conversation, stream)
    assert (text, last) == ("Sunny, 21 degrees.", [])
    # a new prompt in the same conversation starts its rule again; another prompt, another rule
    assert [n for _, n, _ in turn(server.root, conversation + opening("And the weather in Oslo?"), stream)[1]] == ["get_weather"]
    assert turn(server.root, opening("hello"), stream) == ("I only know the weather.", [])
    assert len(server.requests) == 6
    assert {r.api for r in server.requests} == {api}


def test_usage_and_model_come_from_the_script(scripted_model, tmp_path):
    (tmp_path / "model.yaml").write_text(SCRIPT, encoding="utf-8")
    server = scripted_model(tmp_path / "model.yaml")
    reply = httpx.post(f"{server.root}/v1/messages", json={"messages": [{"role": "user", "content": "hi"}]}).json()
    assert reply["model"] == "scripted-test"
    assert reply["usage"] == {"input_tokens": 7, "output_tokens": 3}
    chat = httpx.post(f"{server.openai_url}/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]}).json()
    assert chat["usage"]["prompt_tokens"] == 7
    assert chat["choices"][0]["finish_reason"] == "stop"


def test_a_prompt_no_rule_matches_is_an_error_naming_it(scripted_model, tmp_path):
    (tmp_path / "model.yaml").write_text("rules:\n  - when: weather\n    answer: sunny\n", encoding="utf-8")
    server = scripted_model(tmp_path / "model.yaml")
    reply = httpx.post(f"{server.root}/v1/messages", json={"messages": [{"role": "user", "content": "tell a joke"}]})
    assert reply.status_code == 400
    assert "matches the prompt 'tell a joke'" in reply.json()["error"]["message"]
    assert httpx.get(f"{server.root}/v1/models").status_code == 404


PATCH = "*** Begin Patch\n*** Add File: added.txt\n+ADDED\n*** End Patch\n"


def test_the_responses_builders_give_the_api_s_shapes():
    from omk.testing import Request
    from omk.testing.responses import custom_call_reply, events, tool_call_reply, tool_outputs

    (item,) = custom_call_reply("apply_patch", PATCH, call_id="p1", output_tokens=9)["output"]
    assert {k: v for k, v in item.items() if k != "id"} == {"type": "custom_tool_call", "status": "completed", "call_id": "p1", "name": "apply_patch", "input": PATCH}
    assert item["id"].startswith("ctc_")
    reply = custom_call_reply("apply_patch", PATCH, call_id="p1", output_tokens=9)
    assert reply["object"] == "response"
    assert reply["usage"]["output_tokens"] == 9
    kinds = [kind for kind, _ in events(reply)]
    assert kinds == ["response.created", "response.output_item.added", "response.custom_tool_call_input.delta",
                     "response.custom_tool_call_input.done", "response.output_item.done", "response.completed"]
    streamed = dict(events(reply))
    assert streamed["response.custom_tool_call_input.done"]["input"] == PATCH
    assert streamed["response.output_item.added"]["item"]["input"] == ""
    (call,) = tool_call_reply("exec_command", {"cmd": "ls"}, call_id="c1")["output"]
    assert (call["type"], call["call_id"], call["name"], json.loads(call["arguments"])) == ("function_call", "c1", "exec_command", {"cmd": "ls"})
    sent = [{"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": PATCH},
            {"type": "custom_tool_call_output", "call_id": "p1", "output": "Success. Updated the following files:\nA added.txt"},
            {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "a.txt"}]},
            {"role": "user", "content": "next"}]
    request = Request("POST", "/v1/responses", {}, b"", {"input": sent})
    assert tool_outputs(request) == {"p1": "Success. Updated the following files:\nA added.txt", "c1": "a.txt"}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_script_calls_a_freeform_tool_with_text(stream, scripted_model, tmp_path):
    (tmp_path / "model.yaml").write_text("rules:\n  - when: notes\n    tools:\n      - apply_patch: |\n" + "".join(f"          {line}\n" for line in PATCH.splitlines()) + "    answer: patched\n", encoding="utf-8")
    server = scripted_model(tmp_path / "model.yaml")
    opening = [{"role": "user", "content": [{"type": "input_text", "text": "Update the notes."}]}]
    reply = httpx.post(f"{server.root}/v1/responses", json={"model": "m", "input": opening, "stream": stream})
    assert reply.status_code == 200, reply.text
    output = [e["item"] for e in parse_sse(reply.text) if e["type"] == "response.output_item.done"] if stream else reply.json()["output"]
    (call,) = output
    assert (call["type"], call["name"], call["input"]) == ("custom_tool_call", "apply_patch", PATCH)
    answered = [*opening, {"type": "custom_tool_call", "call_id": call["call_id"], "name": "apply_patch", "input": PATCH},
                {"type": "custom_tool_call_output", "call_id": call["call_id"], "output": "Done!"}]
    assert responses_turn(server.root, answered, stream) == ("patched", [])
    claude = httpx.post(f"{server.root}/v1/messages", json={"messages": [{"role": "user", "content": "Update the notes."}], "max_tokens": 9})
    assert claude.status_code == 400
    assert "calls apply_patch with text, a freeform tool only the Responses API has" in claude.json()["error"]["message"]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("rules:\n  - when: a\n    answer: b\n    tool: []\n", "model.yaml:4: rules[0].tool: unknown field"),
        ("rules:\n  - when: a\n    tools:\n      - Bash: 3\n    answer: b\n", "model.yaml:4: rules[0].tools[0].Bash: the tool's input must be a mapping"),
        ("rules:\n  - when: '('\n    answer: b\n", "model.yaml:2: rules[0].when: not a regular expression"),
        ("rules:\n  - when: a\n", "model.yaml:2: rules[0].answer: must be text"),
        ("rules: []\n", "model.yaml:1: rules: must be a non-empty list"),
        ("rules:\n  - listed: [notes]\n    answer: b\n", "model.yaml:2: rules[0].listed: must map skill names"),
        ("rules:\n  - listed: {notes: '('}\n    answer: b\n", "model.yaml:2: rules[0].listed.notes: not a regular expression"),
    ],
)
def test_a_bad_script_names_file_line_and_field(tmp_path, text, where):
    path = tmp_path / "model.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_script(path)
    assert str(caught.value).startswith(str(tmp_path / where)), str(caught.value)


LISTED = """
rules:
  - when: changelog
    listed: {release-notes: changelog}
    tools:
      - Skill: {skill: release-notes}
    answer: notes drafted
  - answer: a general answer
"""
CLAUDE_LISTING = (
    "# Environment\n\nThe following skills are available for use with the Skill tool:\n\n"
    "- release-notes: {}\n- other: Something else.\nTRIGGER when asked about a changelog.\n\nToday's date is 2026-11-29."
)
CODEX_LISTING = (
    "<skills_instructions>\n## Skills\n### Skill roots\n- `r0` = `/home/.codex/skills`\n### Available skills\n"
    "- other: Something else about a changelog. (file: r0/other/SKILL.md)\n- release-notes: {} (file: r0/release-notes/SKILL.md)\n</skills_instructions>"
)


def _listed_in(api: str, description: str, prompt: str) -> dict[str, Any]:
    """A request as each client sends it: the listing where that client puts it."""
    if api == "anthropic":
        return {"max_tokens": 9, "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]},
                                              {"role": "system", "content": CLAUDE_LISTING.format(description)}]}
    if api == "chat":
        return {"messages": [{"role": "system", "content": CLAUDE_LISTING.format(description)}, {"role": "user", "content": prompt}]}
    listing = {"role": "developer", "content": [{"type": "input_text", "text": CODEX_LISTING.format(description)}]}
    return {"input": [listing, {"role": "user", "content": [{"type": "input_text", "text": prompt}]}]}


@pytest.mark.parametrize("api", sorted(APIS))
def test_a_listed_rule_plays_only_when_the_skill_is_listed_with_a_matching_description(api, scripted_model, tmp_path):
    from omk.testing import anthropic, openai_chat, responses

    (tmp_path / "model.yaml").write_text(LISTED, encoding="utf-8")
    server = scripted_model(tmp_path / "model.yaml")
    path = {"anthropic": "/v1/messages", "chat": "/v1/chat/completions", "responses": "/v1/responses"}[api]
    reader = {"anthropic": anthropic.read_exchange, "chat": openai_chat.read_exchange, "responses": responses.read_exchange}[api]

    def called(description: str, prompt: str) -> bool:
        body = _listed_in(api, description, prompt)
        assert reader(body).skills["release-notes"] == description
        return "Skill" in httpx.post(server.root + path, json=body).text

    assert called("Drafts release notes, or a changelog summary.", "Summarize the changelog of Zephyr 4.0.")
    assert not called("Drafts release notes.", "Summarize the changelog of Zephyr 4.0.")  # another skill's words do not count
    assert not called("Drafts release notes, or a changelog summary.", "What is the capital of France?")


def test_the_skill_listings_of_both_clients_are_read_name_by_name():
    from omk.testing.conversation import listed_skills

    claude = listed_skills(CLAUDE_LISTING.format("Drafts notes."))
    assert claude == {"release-notes": "Drafts notes.", "other": "Something else.\nTRIGGER when asked about a changelog."}
    codex = listed_skills(CODEX_LISTING.format("Drafts notes."))
    assert codex == {"other": "Something else about a changelog.", "release-notes": "Drafts notes."}
    assert listed_skills("- release-notes: not in a listing") == {}


def serve(args: list[str], cwd: Path) -> tuple[subprocess.Popen[str], str, str]:
    """`omk serve-model …` in the background, the Anthropic base URL it printed, and what it printed."""
    # not run_omk: a server that runs until the test ends, so Popen
    proc = subprocess.Popen([sys.executable, "-m", "omk", "serve-model", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    printed = "".join(proc.stdout.readline() for _ in range(3))
    found = re.search(r"on (http://127\.0\.0\.1:\d+)", printed)
    if found is None:
        proc.kill()
        raise AssertionError(printed + proc.stdout.read())
    return proc, found.group(1), printed


def test_serve_model_prints_its_urls_and_records_every_request(tmp_path):
    (tmp_path / "model.yaml").write_text(SCRIPT, encoding="utf-8")
    proc, url, out = serve(["model.yaml", "--port", "0", "--record", "requests.jsonl"], tmp_path)
    try:
        reply = httpx.post(f"{url}/v1/responses", json={"input": PROMPT})
        assert reply.json()["output"][0]["name"] == "get_weather"
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert f"OPENAI_BASE_URL={url}/v1" in out
    assert f"ANTHROPIC_BASE_URL={url}" in out
    recorded = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text(encoding="utf-8").splitlines()]
    assert recorded == [{"method": "POST", "path": "/v1/responses", "api": "responses", "body": {"input": PROMPT}}]


def test_serve_model_with_a_bad_script_is_exit_2_with_one_line(tmp_path):
    (tmp_path / "model.yaml").write_text("rules: 3\n", encoding="utf-8")
    done = run_omk("serve-model", "model.yaml", cwd=tmp_path, drop=(), columns=None, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == "model.yaml:1: rules: must be a non-empty list of rules"


def docs_commands(index: int = 0) -> list[str]:
    """The two commands of docs/targets.md "Dry-run an agent offline" (its first example, or its
    `index`th)."""
    text = (ROOT / "docs" / "targets.md").read_text(encoding="utf-8")
    section = text.split("## Dry-run an agent offline", 1)[1]
    block = section.split("```sh\n")[1 + index].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def dry_run(tmp_path: Path, example: str, index: int, env_extra: dict[str, str]) -> dict:
    """Run the documented commands of `example` on a copy of samples/, the server on any free port."""
    serve_line, eval_line = docs_commands(index)
    assert serve_line == f"omk serve-model samples/{example}/model-script.yaml &"
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    proc, url, _ = serve([*serve_line.split()[2:-1], "--port", "0"], tmp_path)  # any free port, not the documented one
    try:
        words = eval_line.replace("http://127.0.0.1:8642", url).split()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_"))}
        env.update(w.split("=", 1) for w in words if "=" in w and not w.startswith("-"))
        env.update(env_extra, HOME=str(tmp_path))
        command = [w for w in words if "=" not in w]
        assert command[:2] == ["omk", "eval"]
        done = run_omk(
            *command[1:], "--out", "run",
            cwd=tmp_path, base=env, drop=(), columns=None, timeout=300,
        )  # fmt: skip
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))


def test_the_documented_dry_run_of_samples_claude_passes_offline(tmp_path):
    report = dry_run(tmp_path, "claude", 0, {"OMK_CLAUDE": require_claude()})
    assert [(r["sample_id"], r["status"], r["passed"]) for r in report["results"]] == [
        ("rn-next-version-en", "ok", True),
        ("rn-only-fixes-zh", "ok", True),
    ]


def test_the_documented_dry_run_of_samples_codex_passes_offline(tmp_path):
    report = dry_run(tmp_path, "codex", 1, {"OMK_CODEX": require_codex()})
    assert report["target"]["kind"] == "codex"
    assert [(r["sample_id"], r["status"], r["passed"]) for r in report["results"]] == [
        ("rn-next-version-en", "ok", True),
        ("rn-only-fixes-zh", "ok", True),
    ]
