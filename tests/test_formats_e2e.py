"""`omk eval` end to end on M365 and Big Sky datasets, as real subprocesses: the demo agent over the
command protocol, the loopback OpenAI fake as target and as judge, replay, two targets compared
(an experiment with the pairwise judge),
inline prompts, discovery, `omk migrate` and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cli_support import run_omk

from omk.testing import ModelServer
from omk.testing.openai_chat import text_reply, tool_call_reply

ROOT = Path(__file__).resolve().parent.parent
M365 = ROOT / "samples" / "m365" / "evals.json"
BIGSKY = ROOT / "samples" / "bigsky" / "dataset.json"
BIGSKY_V0 = ROOT / "samples" / "bigsky" / "responses-v0.jsonl"
AGENT = ROOT / "samples" / "agents" / "support_agent.py"


def omk(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, env={"OPENAI_API_KEY": "sk-test", **(env or {})}, columns=200, timeout=120)


def report_of(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text(encoding="utf-8"))


def user_text(req) -> str:
    return next(m["content"] for m in reversed(req.json["messages"]) if m["role"] == "user")


def system_text(req) -> str:
    return next((m["content"] for m in req.json["messages"] if m["role"] == "system"), "")


# --- M365 -----------------------------------------------------------------------------------------


def test_m365_dataset_with_the_demo_agent_and_a_judge(tmp_path):
    def judge(req):
        return text_reply(json.dumps({"reason": "on point", "score": 4}))

    with ModelServer.for_openai(judge) as fake:
        proc = omk("eval", str(M365), "--judge", f"openai:judge@{fake.url}", "--out", str(tmp_path / "run"), "--format", "md,junit,html", cwd=tmp_path)
        prompts = [user_text(r) for r in fake.requests]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = report_of(tmp_path / "run")
    by_id = {r["sample_id"]: r for r in report["results"]}
    assert list(by_id) == ["KB-001", "KB-002", "TS-001", "ESC-001", "CONV-001"]
    kb = by_id["KB-001"]
    assert [(a["type"], a["status"]) for a in kb["assertions"]] == [
        ("relevance", "passed"),
        ("coherence", "passed"),
        ("partial_match", "passed"),
        ("similarity", "passed"),
    ]
    assert kb["category"] == "knowledge-base"
    assert kb["assertions"][0]["score"] == 4
    assert [a["type"] for a in by_id["ESC-001"]["assertions"]] == ["exact_match"]  # replace mode
    grounded = by_id["KB-002"]["assertions"][3]
    assert grounded["type"] == "groundedness"
    assert grounded["status"] == "passed"
    conv = by_id["CONV-001"]
    assert [[a["type"] for a in t["assertions"]] for t in conv["turns"]] == [["relevance", "coherence", "partial_match"], ["exact_match"]]
    assert conv["passed"] is True
    assert conv["category"] == "conversation"
    assert [c["category"] for c in report["summary"]["categories"]] == ["knowledge-base", "troubleshooting", "escalation", "conversation"]
    assert report["summary"]["categories"][0]["total"] == 2
    assert {"relevance", "coherence", "groundedness", "similarity"} <= set(report["judge"]["templates"])
    # the judge saw the Chinese prompt, the grounding context and the expected answer
    assert any(p.startswith("## Query\n这款耳机的保修期是多久？") for p in prompts)
    assert any("## Context\nWarranty policy: 12 months" in p for p in prompts)
    assert any("## Expected answer\n保修期为自签收之日起 12 个月" in p for p in prompts)
    assert any("## Query\n那如果是进水坏的，还在保修范围内吗？" in p for p in prompts) is False  # turn 2 runs ExactMatch only
    assert "By category" in proc.stdout
    assert "### By category" in (tmp_path / "run" / "summary.md").read_text(encoding="utf-8")
    assert 'classname="evals.conversation"' in (tmp_path / "run" / "junit.xml").read_text(encoding="utf-8")


def test_m365_seed_example_against_an_openai_agent(tmp_path):
    seed = {
        "schemaVersion": "1.2.0",
        "default_evaluators": {"Relevance": {}, "Coherence": {}},
        "items": [
            {
                "prompt": "What is Microsoft Graph?",
                "expected_response": "A unified API endpoint for Microsoft services.",
                "evaluators": {"Citations": {"citation_format": "mixed"}},
                "evaluators_mode": "extend",
            },
            {
                "name": "Expense policy flow",
                "turns": [
                    {"prompt": "I spent $250 on dinner. Is that okay?", "expected_response": "The per-diem meal allowance is $200."},
                    {
                        "prompt": "What should I do about the overage?",
                        "expected_response": "Request manager approval.",
                        "evaluators": {"ExactMatch": {"case_sensitive": False}},
                        "evaluators_mode": "replace",
                    },
                ],
            },
        ],
    }
    (tmp_path / "evals.json").write_text(json.dumps(seed), encoding="utf-8")

    def respond(req):
        if req.json["model"] == "judge":
            return text_reply(json.dumps({"reason": "fine", "score": 5}))
        text = user_text(req)
        if "Graph" in text:
            return text_reply("Microsoft Graph is a unified API endpoint for Microsoft 365 data [1][2].")
        if "overage" in text:
            return text_reply("For the $50 over the per-diem, please request manager approval.")
        return text_reply("The per-diem meal allowance is $200, so $250 is over it.")

    with ModelServer.for_openai(respond) as fake:
        env = {"OPENAI_BASE_URL": fake.url}
        proc = omk("eval", "--target", "openai:agent", "--judge", f"openai:judge@{fake.url}", "--out", "run", cwd=tmp_path, env=env)
        agent = [r.json["messages"] for r in fake.requests if r.json["model"] == "agent"]
    assert proc.returncode == 0, proc.stdout + proc.stderr  # discovered ./evals.json
    assert len(agent) == 3
    second_turn = next(m for m in agent if m[-1]["content"] == "What should I do about the overage?")  # items run concurrently
    assert [m["content"] for m in second_turn] == [
        "I spent $250 on dinner. Is that okay?",
        "The per-diem meal allowance is $200, so $250 is over it.",
        "What should I do about the overage?",
    ]  # the second turn carries the first as history
    graph, flow = report_of(tmp_path / "run")["results"]
    citations = graph["assertions"][2]
    assert (citations["type"], citations["status"], citations["metric"]) == ("citations", "passed", 2)
    assert [[(a["type"], a["status"]) for a in t["assertions"]] for t in flow["turns"]] == [
        [("relevance", "passed"), ("coherence", "passed")],
        [("exact_match", "passed")],
    ]


def test_m365_without_a_judge_skips_the_llm_evaluators(tmp_path):
    proc = omk("eval", str(M365), "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kb = report_of(tmp_path / "run")["results"][0]
    assert [a["status"] for a in kb["assertions"]] == ["skipped", "skipped", "passed", "skipped"]
    assert "judge items skipped" in proc.stdout


def test_bad_m365_file_exits_2_with_one_line_per_problem(tmp_path):
    bad = tmp_path / "evals.json"
    bad.write_text(
        '{"schemaVersion": "1.2.0",\n "items": [\n  {"prompt": "p", "expeceted_response": "x"},\n'
        '  {"prompt": "q", "evaluators": {"Similarity": {"threshold": 9}}}\n ]}\n',
        encoding="utf-8",
    )
    proc = omk("eval", str(bad), "--target", "replay:none.jsonl", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0] == f'{bad}:3: items[0] expeceted_response: unknown field (did you mean "expected_response"?)'
    assert lines[1] == f"{bad}:4: items[1] evaluators.Similarity.threshold: must be a number from 1 to 5 (got number 9)"


def test_inline_prompts_like_runevals(tmp_path):
    replay = tmp_path / "answers.jsonl"
    replay.write_text(
        json.dumps({"sample_id": "prompt-1", "output": "Teams is a collaboration platform for chat and meetings."}) + "\n"
        + json.dumps({"sample_id": "prompt-2", "output": "SharePoint 是一个内容管理系统。"}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    args = ["eval", "--prompts", "What is Teams?", "什么是 SharePoint？", "--expected", "Teams is a collaboration platform", "SharePoint 是内容管理系统"]
    proc = omk(*args, "--evaluators", "PartialMatch,ExactMatch", "--target", f"replay:{replay}", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # prompt-2 does not contain the expected text
    results = report_of(tmp_path / "run")["results"]
    assert [r["sample_id"] for r in results] == ["prompt-1", "prompt-2"]
    assert [(a["type"], a["status"]) for a in results[0]["assertions"]] == [("partial_match", "passed"), ("exact_match", "passed")]
    assert [(a["type"], a["status"]) for a in results[1]["assertions"]] == [("partial_match", "passed"), ("exact_match", "failed")]
    mismatch = omk("eval", "--prompts", "a", "b", "--expected", "x", "--target", f"replay:{replay}", cwd=tmp_path)
    assert mismatch.returncode == 2
    assert mismatch.stderr.strip() == "--expected: 1 expected answer(s) for 2 prompt(s); give one per prompt, in the same order"
    stray = omk("eval", str(M365), "--expected", "x", cwd=tmp_path)
    assert stray.returncode == 2
    assert "--expected goes with --prompts" in stray.stderr


def test_discovered_legacy_array_runs_as_is_and_migrate_upgrades_it(tmp_path):
    legacy = [{"prompt": "What is Teams?", "expected_response": "A platform"}]
    (tmp_path / "evals").mkdir()
    path = tmp_path / "evals" / "prompts.json"
    path.write_text(json.dumps(legacy), encoding="utf-8")
    replay = tmp_path / "r.jsonl"
    replay.write_text(json.dumps({"sample_id": "prompts-1", "output": "A platform for teamwork."}) + "\n", encoding="utf-8")
    proc = omk("eval", "--target", f"replay:{replay}", "--out", str(tmp_path / "run"), cwd=tmp_path)
    report = report_of(tmp_path / "run")
    assert report["samples_files"] == [str(path)]
    assert [a["status"] for a in report["results"][0]["assertions"]] == ["skipped", "skipped"]  # Relevance, Coherence
    assert proc.returncode == 1  # graded by nothing without a judge
    assert json.loads(path.read_text(encoding="utf-8")) == legacy
    assert len(list((tmp_path / "evals").iterdir())) == 1

    done = omk("migrate", str(path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    backups = [p for p in (tmp_path / "evals").iterdir() if ".bak." in p.name]
    assert len(backups) == 1
    assert json.loads(backups[0].read_text(encoding="utf-8")) == legacy
    assert json.loads(path.read_text(encoding="utf-8"))["schemaVersion"] == "1.2.0"
    assert f"backup: {backups[0]}" in done.stdout
    refused = omk("migrate", str(BIGSKY), cwd=tmp_path)
    assert refused.returncode == 2
    assert "not an M365 eval document (a Big Sky dataset)" in refused.stderr
    missing = omk("migrate", str(tmp_path / "nope.json"), cwd=tmp_path)
    assert missing.returncode == 2
    assert "file not found" in missing.stderr


# --- Big Sky ----------------------------------------------------------------------------------------


V0_ANSWERS = ("请提供您的订单号", "issue_refund", "Hello! How can I help?")  # responses-v0.jsonl's answers


def shown_answers(prompt: str) -> tuple[str, str]:
    """The pairwise prompt's two answers: the one shown first, the one shown second."""
    first, second = prompt.split("## Answer of assistant A")[1].split("## Answer of assistant B")
    return first, second.split("Return only JSON")[0]


def _pairwise_judge(prompt: str) -> dict:
    """Judges by content, never by position: the same answers get the same verdict in either
    order. The v0 replay's answer loses, except on "Who am I"; identical answers tie."""
    first, second = shown_answers(prompt)
    if first == second:
        return {"reason": "the same answer", "preference": 0}
    first_is_v0 = any(m in first for m in V0_ANSWERS)
    first_wins = first_is_v0 == ("Who am I" in prompt)
    return {"reason": "looked the order up" if "Who am I" not in prompt else "a plain greeting", "preference": 1 if first_wins else 2}


def _agent_and_judge(req):
    """The fake plays both: model `agent` is the agent under test, model `judge` the judge."""
    if req.json["model"] == "judge":
        prompt = user_text(req)
        if '"preference"' in prompt:
            return text_reply(json.dumps(_pairwise_judge(prompt)))
        return text_reply('{"value": "similar"}')
    text = user_text(req)
    if "A1001" in text:
        return tool_call_reply([("lookup_order", {"order_id": "A1001"})])
    if "它" in text:
        earlier = " ".join(m["content"] or "" for m in req.json["messages"] if m["role"] == "user")
        return tool_call_reply([("lookup_order", {"order_id": "B2002" if "B2002" in earlier else "?"})])
    if "C3003" in text:
        return tool_call_reply([("lookup_order", {"order_id": "C3003", "include_items": True})], text="Checking.")
    return text_reply("Hi! I'm Nova from Acme Outdoor support. How can I help you today?")


def test_bigsky_dataset_against_an_openai_agent_with_a_judge(tmp_path):
    with ModelServer.for_openai(_agent_and_judge) as fake:
        env = {"OPENAI_BASE_URL": fake.url}
        proc = omk("eval", str(BIGSKY), "--target", "openai:agent", "--judge", f"openai:judge@{fake.url}", "--out", str(tmp_path / "run"), cwd=tmp_path, env=env)
        agent_calls = [r for r in fake.requests if r.json["model"] == "agent"]
    assert len(agent_calls) == 4  # one model call per example: Big Sky's single step
    request = next(r for r in agent_calls if "A1001" in user_text(r))  # samples run concurrently
    first = request.json
    assert system_text(request) == "You are Nova, the support agent of Acme Outdoor. Use the tools to look orders up."
    assert first["messages"][1:] == [{"role": "assistant", "content": "Hi! How can I help you today?"}, {"role": "user", "content": "Where is my order A1001?"}]
    assert first["tools"][0]["function"]["name"] == "lookup_order"
    assert set(first["tools"][0]["function"]["parameters"]["properties"]) == {"order_id", "include_items"}
    report = report_of(tmp_path / "run")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # example 3 said "Checking." where nothing was expected
    by_id = {r["sample_id"]: r for r in report["results"]}
    assert [(a["type"], a["status"]) for a in by_id["1"]["assertions"]] == [("match_tool_call", "passed"), ("compare_content", "passed")]
    assert by_id["1"]["trace"]["tool_calls"] == [
        {"tool": "lookup_order", "input": {"order_id": "A1001"}, "output": None, "mocked": False, "mock_key": None, "is_error": False}
    ]
    assert by_id["1"]["trace"]["notes"] == ["single step: 1 tool call(s) recorded, not run"]
    assert by_id["2"]["assertions"][0]["status"] == "passed"  # the order number came from the history
    third = by_id["3"]["assertions"]
    assert third[0]["status"] == "passed"  # include_items is IGNOREd
    assert third[1]["status"] == "failed"
    assert "the expected text is empty" in third[1]["message"]
    assert by_id["4"]["assertions"][0]["message"] == "first call matches: no tool call"


def test_two_targets_compared_pairwise(tmp_path):
    with ModelServer.for_openai(_agent_and_judge) as fake:
        proc = omk(
            "eval", str(BIGSKY),
            "--target", f"cmd:{sys.executable} {AGENT}",
            "--target", f"replay:{BIGSKY_V0}",
            "--judge", f"openai:judge@{fake.url}",
            "--out", str(tmp_path / "run"),
            cwd=tmp_path,
        )  # fmt: skip
        pairwise_prompts = [user_text(r) for r in fake.requests if '"preference"' in user_text(r)]
        judge = f"openai:judge@{fake.url}"
    assert proc.returncode == 0, proc.stdout + proc.stderr  # an experiment: 0 without --require, although B fails its gate
    run = tmp_path / "run"
    control, treatment = f"cmd-{Path(sys.executable).name}-support_agent.py", "replay-responses-v0.jsonl"  # named after the specs
    a, b = report_of(run / "variants" / control), report_of(run / "variants" / treatment)
    assert a["summary"]["passed"] == 4
    assert b["summary"]["passed"] == 2
    assert not (run / "target-2").exists()
    experiment = report_of(run)["experiment"]
    assert [(v["name"], v["role"]) for v in experiment["variants"]] == [(control, "control"), (treatment, "treatment")]
    assert experiment["comparisons"][0]["pass_rate"]["lost"] == 2
    assert experiment["verdict"]["level"]
    block = experiment["pairwise"]
    assert block["judge"] == [judge]
    assert block["orders"] == "both"
    assert block["judge_cost_usd"] is None
    (pair,) = block["pairs"]
    assert pair["reports"] == [f"variants/{control}", f"variants/{treatment}"]
    assert [t["kind"] for t in pair["targets"]] == ["cmd", "replay"]
    assert pair["summary"] == {"compared": 4, "a_better": 2, "b_better": 1, "ties": 1, "errored": 0, "skipped": 0}
    assert pair["position"] == {"consistent": 4, "inconsistent": 0, "first": 0, "second": 0, "partial": 0}
    assert pair["win_rate"] == [
        {"key": "llm_comparison", "b_better": 1, "a_better": 2, "ties": 1, "decisive": 3, "rate": 0.3333,
         "ci": {"low": 0.0615, "high": 0.7923, "level": 0.95, "method": "wilson"}, "p_value": 1.0, "tie_rate": 0.25}
    ]  # fmt: skip
    first = pair["verdicts"][0]  # the same answer from both targets: a tie in both orders
    assert first == {
        "sample_id": "1",
        "key": "llm_comparison",
        "status": "ok",
        "preference": 0,
        "winner": "tie",
        "scores": {"a": 0, "b": 0},
        "reason": "the same answer",
        "error": None,
        "orders": {"a_first": {"winner": "tie", "reason": "the same answer"}, "b_first": {"winner": "tie", "reason": "the same answer"}},
        "position": None,
    }
    assert [v["winner"] for v in pair["verdicts"]] == ["tie", "a", "a", "b"]
    assert pair["verdicts"][3]["scores"] == {"a": 0, "b": 1}
    assert len(pairwise_prompts) == 8  # 4 examples × both orders
    second = [p for p in pairwise_prompts if "B2002" in p]
    assert len(second) == 2
    for prompt in second:
        assert "**user**: 你好，我的订单号是 B2002。" in prompt
        assert 'Called Tool: lookup_order({"order_id": "B2002"})' in prompt
        assert "请提供您的订单号" in prompt  # B's answer
    shown_first = {"请提供您的订单号" in shown_answers(p)[0] for p in second}
    assert shown_first == {True, False}  # B's answer was shown first once, second once
    assert "A better 2 · B better 1 · tie 1" in proc.stdout


def test_two_targets_without_a_judge_skip_the_verdicts(tmp_path):
    samples = tmp_path / "eval-samples.yaml"
    samples.write_text("- sample_id: a\n  prompt: hi\n  assertions: [{type: contains, value: hi}]\n", encoding="utf-8")
    for name in ("x", "y", "z"):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps({"sample_id": "a", "output": f"hi from {name}"}) + "\n", encoding="utf-8")
    proc = omk("eval", "--target", "replay:x.jsonl", "--target", "replay:y.jsonl", "--out", "run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    experiment = report_of(tmp_path / "run")["experiment"]
    assert experiment["comparisons"][0]["composite"]["n"] == 1  # the paired statistics work without a judge
    block = experiment["pairwise"]
    (verdict,) = block["pairs"][0]["verdicts"]
    assert (verdict["key"], verdict["status"], verdict["error"]) == ("pairwise", "skipped", "no judge configured (use --judge)")
    assert block["pairs"][0]["summary"]["skipped"] == 1
    assert block["judge"] is None
    assert block["pairs"][0]["win_rate"][0]["rate"] is None


def test_three_targets_compare_two_treatments_with_the_first(tmp_path):
    test_two_targets_without_a_judge_skip_the_verdicts(tmp_path)
    three = omk("eval", "--target", "replay:x.jsonl", "--target", "replay:y.jsonl", "--target", "replay:z.jsonl", "--out", "three", cwd=tmp_path)
    assert three.returncode == 0, three.stdout + three.stderr
    experiment = report_of(tmp_path / "three")["experiment"]
    assert [c["treatment"] for c in experiment["comparisons"]] == ["replay-y.jsonl", "replay-z.jsonl"]
    assert [(p["control"], p["treatment"]) for p in experiment["pairwise"]["pairs"]] == [
        ("replay-x.jsonl", "replay-y.jsonl"), ("replay-x.jsonl", "replay-z.jsonl")
    ]  # fmt: skip
    resumed = omk("eval", "--resume", "run", "--target", "replay:x.jsonl", "--target", "replay:y.jsonl", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr  # the run's own targets, given again (as a command target must be)
    other = omk("eval", "--resume", "run", "--target", "replay:x.jsonl", "--target", "replay:z.jsonl", cwd=tmp_path)
    assert other.returncode == 2, other.stderr
    mixed = omk("eval", "--target", "replay:x.jsonl", "--target", "replay:y.jsonl", "--control", "baseline", cwd=tmp_path)
    assert mixed.returncode == 2
    assert "drop --control/--treatment" in mixed.stderr


def test_pairwise_on_a_conversation_shows_each_targets_replies_turn_by_turn(tmp_path):
    doc = {
        "schemaVersion": "1.2.0",
        "default_evaluators": {"ExactMatch": {}},
        "items": [
            {
                "testId": "CONV",
                "turns": [{"prompt": "第一个问题？", "expected_response": "reply"}, {"prompt": "Second question?", "expected_response": "reply"}],
            }
        ],
    }
    (tmp_path / "evals.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    for name in ("a", "b"):
        turns = [
            {"output": f"{name} reply one", "trace": {"tool_calls": [{"tool": f"look_{name}", "input": {"q": 1}}]}},
            {"output": f"{name} reply two"},
        ]
        (tmp_path / f"{name}.jsonl").write_text(json.dumps({"sample_id": "CONV", "turns": turns}) + "\n", encoding="utf-8")

    def judge(req):  # prefers target a's conversation wherever it is shown
        first, _ = shown_answers(user_text(req))
        return text_reply(json.dumps({"reason": "a is better", "preference": 1 if "a reply one" in first else 2}))

    with ModelServer.for_openai(judge) as fake:
        proc = omk(
            "eval", "evals.json", "--target", "replay:a.jsonl", "--target", "replay:b.jsonl",
            "--judge", f"openai:judge@{fake.url}", "--out", "run", cwd=tmp_path,
        )  # fmt: skip
        prompts = [user_text(r) for r in fake.requests]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (verdict,) = report_of(tmp_path / "run")["experiment"]["pairwise"]["pairs"][0]["verdicts"]
    assert (verdict["winner"], verdict["position"]) == ("a", None)
    prompt = next(p for p in prompts if "a reply one" in shown_answers(p)[0])  # the order with a shown first
    assert len(prompts) == 2
    assert any("b reply one" in shown_answers(p)[0] for p in prompts)
    conversation, answers = prompt.split("## Answer of assistant A")
    answer_a, answer_b = answers.split("## Answer of assistant B")
    assert "**user**: 第一个问题？\n**user**: Second question?" in conversation
    for name, answer in (("a", answer_a), ("b", answer_b)):
        assert (
            f"**user**: 第一个问题？\n**assistant**: {name} reply one\n"
            f'Called Tool: look_{name}({{"q": 1}})\n\n'
            f"**user**: Second question?\n**assistant**: {name} reply two"
        ) in answer
    assert "a reply" not in answer_b
    assert "b reply" not in answer_a


def test_an_item_only_judge_evaluators_check_fails_without_a_judge_as_documented(tmp_path):
    (tmp_path / "prompts.json").write_text('[{"prompt": "Tell me about returns"}]\n', encoding="utf-8")  # seed 000, verbatim
    (tmp_path / "r.jsonl").write_text(json.dumps({"sample_id": "prompts-1", "output": "Returns within 30 days."}) + "\n", encoding="utf-8")
    proc = omk("eval", "prompts.json", "--target", "replay:r.jsonl", "--out", "run", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (result,) = report_of(tmp_path / "run")["results"]
    assert [a["status"] for a in result["assertions"]] == ["skipped", "skipped"]
    assert result["passed"] is False
    assert "nothing was graded" in proc.stdout
    assert "use --judge" in proc.stdout
    doc = " ".join((ROOT / "docs" / "formats.md").read_text(encoding="utf-8").split())
    assert "never as failures" not in doc  # what the docs used to promise
    assert 'fails** with the reason "nothing was graded"' in doc
    assert "run M365 documents with `--judge`" in doc
