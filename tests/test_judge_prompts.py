"""Judge prompt templates: frozen hashes (a template change must be deliberate), content, trace summary."""

from __future__ import annotations

import pytest

from omk.judge import prompts
from omk.records import ToolCall, Trace

# Chinese rubric hashes are omk 0.23's; the others are ours, frozen here.
FROZEN = {
    ("zh", True): ("v3-cot-length", "629bf3b8c41d"),
    ("zh", False): ("v2-cot", "fdc81b19c721"),
    ("en", True): ("v3-cot-length-en", "fb13d0948c38"),
    ("en", False): ("v2-cot-en", "3440c52ebf15"),
}
FROZEN_ASSERTIONS = {
    "en": {
        "semantic_similarity": "bb0960373444",
        "faithfulness": "30e5f0f68f2f",
        "context_recall": "a9ff2cf54f56",
        "answer_relevancy": "55da73b9df08",
    },
}


@pytest.mark.parametrize("lang, debias", list(FROZEN))
def test_rubric_hashes_are_frozen(lang, debias):
    version, digest = FROZEN[(lang, debias)]
    assert prompts.rubric_version(lang, debias) == version
    assert prompts.rubric_hash(lang, debias) == digest


def test_assertion_template_hashes_are_frozen_and_differ_by_language():
    en = prompts.all_hashes("en", True)
    zh = prompts.all_hashes("zh", True)
    for kind, digest in FROZEN_ASSERTIONS["en"].items():
        assert en[kind] == digest
        assert zh[kind] != digest
        assert len(zh[kind]) == 12


def test_rubric_prompt_order_reason_first_then_integer_json():
    text = prompts.rubric_prompt("TASK", "CRIT", "OUT", None, "en", True)
    lines = text.split("\n")
    assert lines[0] == "Please score the quality of the following AI output (template v3-cot-length-en)."
    for a, b in [("TASK", "CRIT"), ("CRIT", "OUT"), ("OUT", "length is not a quality signal"), ("reason first", '"score"')]:
        assert text.index(a) < text.index(b)
    assert text.index('"reasoning"') < text.index('"score"')
    assert "Agent execution" not in text


def test_no_debias_leaves_the_block_out_in_both_languages():
    assert "length is not a quality signal" not in prompts.rubric_prompt("p", "r", "o", None, "en", False)
    zh = prompts.rubric_prompt("p", "r", "o", None, "zh", False)
    assert "长度不是质量信号" not in zh
    assert zh.startswith("请对以下 AI 输出进行质量评分（template v2-cot）。")
    assert "长度不是质量信号" in prompts.rubric_prompt("p", "r", "o", None, "zh", True)


def test_trace_summary_only_with_tool_calls():
    assert prompts.trace_summary(Trace(), "en") is None
    calls = [ToolCall("Read", {"path": "a.py"}, "x" * 300), ToolCall("Bash", "ls", "boom", is_error=True), ToolCall("Read", {}, "y")]
    summary = prompts.trace_summary(Trace(tool_calls=calls), "en")
    assert "3 tool call(s):" in summary
    assert "succeeded 2/3" in summary
    assert "failed 1/3" in summary
    assert "tools used: Read(2), Bash(1)" in summary
    assert "failed tools: Bash" in summary
    assert "[2] Bash(ls) [error] -> boom" in summary
    assert "x" * 100 + "..." in summary
    assert "x" * 101 not in summary
    zh = prompts.trace_summary(Trace(tool_calls=calls), "zh")
    assert "共调用 3 个工具：" in zh
    assert "工具分布：Read(2), Bash(1)" in zh
    text = prompts.rubric_prompt("p", "r", "o", summary, "en", True)
    assert "## Agent execution" in text
    assert "tool choice" in text


def test_trace_summary_caps_steps():
    calls = [ToolCall(f"T{i}", {}, "") for i in range(13)]
    summary = prompts.trace_summary(Trace(tool_calls=calls), "en")
    assert "[10] T9" in summary
    assert "[11]" not in summary
    assert "... 3 more step(s)" in summary


def test_rag_prompts_carry_the_debias_block_and_semantic_similarity_does_not():
    _, faith = prompts.assertion_prompt("faithfulness", ("CTX", "OUT"), "zh")
    assert "## 参考 context\nCTX" in faith
    assert "## 待评估输出\nOUT" in faith
    assert "长度不是质量信号" in faith
    _, sim = prompts.assertion_prompt("semantic_similarity", ("REF", "OUT"), "en")
    assert "## Reference text\nREF" in sim
    assert "length is not" not in sim
    assert '"score"' in sim
