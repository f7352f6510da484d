"""`--lang zh` reaches the lines that were English only: the doctor's advice and recommendations,
a mock drift note, the shard label and an experiment's terminal lines. Each is printed under
`--lang zh` and no English sentence that omk/report/i18n.py translates is left in it."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

from cli_support import run_omk
from report_factory import THRESHOLD, _result, build_report, leaf
from rich.console import Console

from omk.domain.mock_defs import drift_notes
from omk.records import ToolCall, Trace
from omk.records.shard import ShardInfo
from omk.report.html_report import render_html
from omk.report.i18n import ZH, note, shard_label
from omk.report.markdown import render_markdown
from omk.report.terminal import print_summary
from omk.samples.model import Sample
from omk.scoring.summary import summarize

ROOT = Path(__file__).resolve().parents[1]


def _sentences() -> set[str]:
    """Every piece of English between placeholders in a translated text, of three words or more."""
    found = set()
    for english, chinese in ZH.items():
        if english == chinese:
            continue
        for piece in re.split(r"\{[a-z_]+\}", english.split("|")[-1]):
            piece = piece.strip(" :;,.()—")
            if len(piece.split()) >= 3:
                found.add(piece)
    return found


def untranslated(text: str) -> list[str]:
    return sorted(s for s in _sentences() if s in text)


def _omk(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return run_omk(*args, cwd=cwd, drop=(), columns=240, timeout=600)


def test_the_checker_finds_english_it_has_a_translation_for():
    assert untranslated("→ give every sample at least one assertion or a rubric") == ["give every sample at least one assertion or a rubric"]
    assert untranslated("→ 给每条用例至少一条断言或一条评分标准") == []


def test_the_doctors_advice_and_recommendations_in_chinese(tmp_path):
    (tmp_path / "eval-samples.yaml").write_text(
        "- sample_id: a\n  prompt: hi\n  capability: [refunds]\n  assertions: [{type: contains, value: hi}]\n",
        encoding="utf-8",
    )
    en = _omk("doctor", "eval-samples.yaml", cwd=tmp_path)
    zh = _omk("doctor", "eval-samples.yaml", "--lang", "zh", cwd=tmp_path)
    assert zh.returncode == en.returncode == 0, zh.stderr
    kinds = ("small_set", "capability_single", "single_check", "layer_without_checks")
    assert all(f"[advice] {k}" in en.stdout for k in kinds)
    assert len(untranslated(en.stdout)) >= 8  # the English is there to find
    assert "1 条用例：任何退步都无法与噪声区分" in zh.stdout
    assert "能力 'refunds' 只有一条用例" in zh.stdout
    assert "没有用例检查行为层" in zh.stdout
    assert "→ 小用例集只能发现大的退步" in zh.stdout
    assert "健康度 100" in zh.stdout
    assert untranslated(zh.stdout) == [], zh.stdout
    json_out = _omk("doctor", "eval-samples.yaml", "--lang", "zh", "--json", cwd=tmp_path)
    assert "no regression can be told from noise" in json_out.stdout  # the JSON stays English


def test_a_mock_drift_note_in_chinese():
    mocks = [{"tool": "Read", "match": {"file_path": "a.md"}, "response": "x"}]
    calls = [ToolCall(tool="Read", input={"file_path": "b.md"}), ToolCall(tool="Grep", input={"pattern": "x"})]
    notes = drift_notes("production-trace", mocks, calls)
    assert len(notes) == 2
    assert len(untranslated(" ".join(notes))) == 3  # the English is there to find
    said = [note(n, "zh") for n in notes]
    assert said[0] == '模拟漂移：智能体现在以 {"file_path": "b.md"} 调用 Read，录制中从未有过这个输入'
    assert said[1] == "模拟漂移：智能体现在调用 Grep，录制中从未有过这个调用"
    assert note("a note from the target", "zh") == "a note from the target"
    assert note(notes[1]) == notes[1]
    sample = Sample(sample_id="s", prompt="p")
    r = _result(sample, "ok", [leaf("contains", True)], trace=Trace(notes=list(notes)))
    page = render_html(build_report(
        run_id="r", started_at="2026-01-01T00:00:00+00:00", finished_at="2026-01-01T00:00:01+00:00", samples_files=["s.yaml"],
        target={"kind": "replay", "spec": "replay:x"}, judge=None, summary=summarize([r], THRESHOLD, 1.0), results=[r],
    ), "zh")  # fmt: skip
    assert "模拟漂移：智能体现在调用 Grep" in page
    assert untranslated(page) == []


def _sharded(shard: dict) -> dict:
    sample = Sample(sample_id="s", prompt="p")
    rs = [_result(sample, "ok", [leaf("contains", True)])]
    data = build_report(
        run_id="r", started_at="2026-01-01T00:00:00+00:00", finished_at="2026-01-01T00:00:01+00:00", samples_files=["s.yaml"],
        target={"kind": "replay", "spec": "replay:x"}, judge=None, summary=summarize(rs, THRESHOLD, 1.0), results=rs,
    )  # fmt: skip
    return {**data, "shard": shard}


def test_the_shard_label_in_chinese():
    assert shard_label(ShardInfo(count=4, plan="p", index=2), "zh") == "分片 2/4"
    assert shard_label(ShardInfo(count=4, plan="p", merged=(1, 2, 3), missing=(4,)), "zh") == "部分合并：4 个分片中的 3 个，缺少 4"
    assert shard_label(ShardInfo(count=2, plan="p", merged=(1, 2)), "zh") == "已合并：2 个分片中的 2 个"
    assert shard_label(ShardInfo(count=2, plan="p", merged=(1, 2))) == "merged: 2 of 2 shards"
    data = _sharded({"count": 4, "plan": "p", "merged": [1, 2, 3], "missing": [4]})
    out = io.StringIO()
    print_summary(data, Console(file=out, width=160, color_system=None), "zh")
    for text in (out.getvalue(), render_markdown(data, "zh"), render_html(data, "zh")):
        assert "部分合并：4 个分片中的 3 个，缺少 4" in text
        assert "partial merge" not in text
        assert untranslated(text) == []


def test_an_experiments_terminal_lines_in_chinese(tmp_path):
    proc = _omk("eval", "samples/experiment/eval-samples.yaml", "--seed", "7", "--require", "progress", "--lang", "zh", "--out", str(tmp_path / "x"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = proc.stdout + proc.stderr
    for line in ("变体", "每条用例的花费与平均延迟: ", "通过率 (Wilson, 95%): baseline 21% [9%, 40%]", "各层均分及 95% 区间: baseline 事实层 ", "判定：PROGRESS", "  各层胜出者：", "  样本量：", "  稳定性：", "报告: ", "--require progress: 已满足"):
        assert line in text, text
    assert "Variants" not in text
    assert "Layer winners" not in text
    assert "cost, mean latency" not in text
    assert untranslated(text) == [], text


PAIR_JUDGE = """
import json, sys
prompt = json.loads(sys.stdin.readline())["prompt"]
first = prompt.index("plain GOOD") < prompt.index("plain x")  # the answers in order, A then B (prompt in any language)
print(json.dumps({"output": json.dumps({"reason": "GOOD wins", "preference": 1 if first else 2})}))
"""


def test_the_pairwise_tables_of_an_experiment_in_chinese(tmp_path):
    (tmp_path / "eval-samples.yaml").write_text(
        "".join(f"- sample_id: s{i}\n  prompt: question {i}\n  assertions: [{{type: contains, value: plain}}]\n" for i in (1, 2)),
        encoding="utf-8",
    )
    for name in ("x", "y"):
        (tmp_path / f"{name}.jsonl").write_text("".join(f'{{"sample_id": "s{i}", "output": "plain {name.replace("y", "GOOD")}"}}\n' for i in (1, 2)), encoding="utf-8")
    (tmp_path / "judge.py").write_text(PAIR_JUDGE, encoding="utf-8")
    judge = f"cmd:{sys.executable} {tmp_path / 'judge.py'}"
    proc = _omk("eval", "--target", "replay:x.jsonl", "--target", "replay:y.jsonl", "--judge", judge, "--lang", "zh", "--out", "run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "两两对比: A = replay:x.jsonl" in proc.stdout and "B 更好 2" in proc.stdout, proc.stdout
    assert "Pairwise" not in proc.stdout
    assert "A better" not in proc.stdout
    assert untranslated(proc.stdout) == []
