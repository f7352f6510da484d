"""The `pairwise` block (two targets compared) in summary.md, report.html and junit.xml, from a
report dict, from `omk report`, and from a real `omk eval --target A --target B` run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from report_factory import XSS, make_report, sample_results
from test_report_formats import check_junit_shape

from omk.engine.pairwise import entry as _entry
from omk.engine.pairwise import summary as _summary
from omk.report.html_report import JS, _script_hash, render_html
from omk.report.junit import build_junit, render_junit
from omk.report.markdown import render_markdown

LONG = "B 漏掉了 MD5 的问题，" + "reason " * 80 + "END-OF-REASON"


def with_pairwise(keys: tuple[str, ...] = ("pairwise",), votes: bool = False) -> dict:
    """The factory report plus a pairwise block built by omk.engine.pairwise's own entry/summary code."""
    report = make_report()
    zh, tool, errored = (r.sample for r in sample_results())
    verdicts = []
    for key in keys:
        verdicts += [
            _entry(zh, key, status="ok", preference=1, reason="A 识别了 SQL 注入 | 并给出参数化查询"),
            _entry(tool, key, status="ok", preference=2, reason=LONG + " " + XSS),
            _entry(errored, key, status="error", error="target A failed on this sample: HTTP 503 <html>"),
        ]
    verdicts.append(_entry(zh, "tie-" + keys[-1], status="ok", preference=0, reason="both fine"))
    if votes:
        verdicts[0]["votes"] = [
            {"judge": "openai:gpt-4o", "preference": 1, "reason": "A is precise"},
            {"judge": "anthropic:claude", "preference": 2, "reason": "B is " + XSS},
        ]
    block = {"judge": ["openai:gpt-4o"], "summary": _summary(verdicts), "verdicts": verdicts}
    block["summary"]["judge_cost_usd"] = 0.0042
    block["targets"] = [{"kind": "replay", "spec": "replay:a.jsonl"}, {"kind": "cmd", "spec": "cmd:python agent_v1.py"}]
    block["reports"] = [".", "target-2"]
    report["pairwise"] = block
    return report


# --- Markdown ---------------------------------------------------------------------------------------


def test_markdown_has_the_tally_and_each_verdict_with_its_reason():
    md = render_markdown(with_pairwise())
    assert "### Pairwise: A vs B" in md
    assert "A: `replay:a.jsonl` · B: `cmd:python agent_v1.py` · judge: openai:gpt-4o" in md
    assert "| A better | B better | ties | errored | skipped |\n| ---: | ---: | ---: | ---: | ---: |\n| 1 | 1 | 1 | 1 | 0 |" in md
    assert "| sample | key | verdict | reason |" in md  # the tie verdict has its own key
    assert "| cr-sql-注入-zh | pairwise | A better | A 识别了 SQL 注入 \\| 并给出参数化查询 |" in md
    assert "| cs-refund-en | pairwise | error | target A failed on this sample: HTTP 503 &lt;html&gt; |" in md
    assert "| cr-sql-注入-zh | tie-pairwise | tie | both fine |" in md
    row = next(line for line in md.splitlines() if line.startswith("| cr-read-before-review |"))
    reason = row.split(" | ")[-1]
    assert reason.startswith("B 漏掉了 MD5 的问题，reason") and reason.endswith("… |")
    assert len(reason) <= 205 and "END-OF-REASON" not in row  # cut short, no HTML from the answer
    assert "<script>" not in md and "<img" not in md


def test_markdown_hides_the_key_column_when_every_verdict_is_the_default_one():
    report = with_pairwise()
    report["pairwise"]["verdicts"] = report["pairwise"]["verdicts"][:3]
    md = render_markdown(report)
    assert "| sample | verdict | reason |" in md and "| cr-sql-注入-zh | A better |" in md


def test_markdown_folds_a_long_verdict_list_and_speaks_chinese():
    report = with_pairwise(keys=tuple(f"k{i}" for i in range(8)))  # 8 × 3 + 1 verdicts
    md = render_markdown(report)
    assert "<details><summary>Verdicts (25)</summary>" in md
    zh = render_markdown(with_pairwise(), lang="zh")
    assert "### 两两对比: A 对 B" in zh
    assert "| A 更好 | B 更好 | 平局 | 出错 | 已跳过 |" in zh
    assert "| 用例 | 键 | 判定 | 理由 |" in zh and "| A 更好 | A 识别了" in zh


def test_a_report_without_pairwise_has_no_pairwise_section():
    report = make_report()
    assert "Pairwise" not in render_markdown(report) and 'id="pairwise"' not in render_html(report)
    assert not [p for p in build_junit(report).iter("property") if p.get("name").startswith("pairwise:")]


# --- HTML -------------------------------------------------------------------------------------------


def test_html_section_in_the_category_tables_style():
    page = render_html(with_pairwise(votes=True))
    section = page[page.index('<h2 id="pairwise">') : page.index('<h2>score distribution</h2>')]
    assert "Pairwise: A vs B" in section and "<code>replay:a.jsonl</code>" in section and "openai:gpt-4o" in section
    tally = re.search(r'<table class="pairwise-tally">.*?</table>', section).group(0)
    assert re.findall(r'<td data-key="(\w+)">(\d+)</td>', tally) == [
        ("a_better", "1"), ("b_better", "1"), ("ties", "1"), ("errored", "1"), ("skipped", "0")
    ]  # fmt: skip
    rows = re.findall(r'<tr class="verdict" data-status="(\w+)">(.*?)</tr>', section)
    assert [status for status, _ in rows] == ["ok", "ok", "error", "ok"]
    assert '<span class="badge pw-a">A better</span>' in rows[0][1] and '<span class="badge pw-b">B better</span>' in rows[1][1]
    assert '<span class="badge error">error</span>' in rows[2][1] and '<span class="badge skip">tie</span>' in rows[3][1]
    assert "END-OF-REASON" in rows[1][1]  # the page keeps the whole reason
    assert '<ul class="votes"><li><code>openai:gpt-4o</code>: A — A is precise</li>' in rows[0][1]
    for _, cells in rows:  # each sample links to its own panel (the page shows it on the hash change)
        target, sid = re.search(r'<a href="#(sample-\d+)"><code>([^<]+)</code></a>', cells).groups()
        panel = re.search(rf'<article class="detail" id="{target}" hidden>.*?</article>', page, re.S).group(0)
        assert sid in panel
    assert "addEventListener('hashchange'" in page


def test_html_pairwise_stays_self_contained_and_escaped():
    page = render_html(with_pairwise(votes=True))
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "no network resource"
    assert not re.search(r"""url\(|@import|<link|<iframe|<img""", page)
    assert "<script>window.__pwned" not in page and 'onerror="window' not in page
    assert page.count("<script>") == 1 and _script_hash(JS) in page
    zh = render_html(with_pairwise(), lang="zh")
    assert "两两对比: A 对 B" in zh and "<th>A 更好</th>" in zh and "<th>已跳过</th>" in zh and ">A 更好</span>" in zh


# --- JUnit ------------------------------------------------------------------------------------------


def test_junit_carries_the_tally_and_verdicts_as_suite_properties():
    xml = render_junit(with_pairwise(keys=("pairwise", "llm_comparison")))
    root = check_junit_shape(xml)
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert {k: v for k, v in props.items() if k.startswith("pairwise:") and ":verdict:" not in k} == {
        "pairwise:target_a": "replay:a.jsonl",
        "pairwise:target_b": "cmd:python agent_v1.py",
        "pairwise:judge": "openai:gpt-4o",
        "pairwise:compared": "5",
        "pairwise:a_better": "2",
        "pairwise:b_better": "2",
        "pairwise:ties": "1",
        "pairwise:errored": "2",
        "pairwise:skipped": "0",
    }
    assert props["pairwise:verdict:cr-sql-注入-zh"] == "a"
    assert props["pairwise:verdict:cr-read-before-review:llm_comparison"] == "b"
    assert props["pairwise:verdict:cs-refund-en"] == "error"
    assert props["pairwise:verdict:cr-sql-注入-zh:tie-llm_comparison"] == "tie"
    assert len(root.findall(".//testcase")) == 3  # verdicts never become test cases: they do not gate


def test_junit_property_names_stay_valid_xml_whatever_the_sample_id():
    report = with_pairwise()
    report["pairwise"]["verdicts"][0]["sample_id"] = "bell\x07-id"
    props = {p.get("name") for p in check_junit_shape(render_junit(report)).iter("property")}
    assert "pairwise:verdict:bell\\x07-id" in props


# --- re-rendering and a real run --------------------------------------------------------------------


def omk(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("OMK_TARGET", "OMK_JUDGE")}
    env.update(NO_COLOR="1", COLUMNS="160")
    proc = subprocess.run([sys.executable, "-m", "omk", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_omk_report_re_renders_the_pairwise_block(tmp_path):
    report = with_pairwise()
    (tmp_path / "report.json").write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    proc = omk("report", str(tmp_path), "--format", "md,html,junit", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == render_markdown(report)
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == render_html(report)
    assert 'name="pairwise:a_better" value="1"' in (tmp_path / "junit.xml").read_text(encoding="utf-8")


JUDGE = """
import json, sys
request = json.loads(sys.stdin.readline())
prefer = 2 if "from y" in request["prompt"] else 1  # only target B (y.jsonl) says "from y"
print(json.dumps({"output": json.dumps({"reason": "the answer that greets by name | wins", "preference": prefer})}))
"""


def test_a_two_target_run_writes_the_verdicts_into_every_format(tmp_path):
    (tmp_path / "eval-samples.yaml").write_text(
        "- sample_id: greet\n  prompt: hi\n  assertions: [{type: contains, value: hi}]\n"
        "- sample_id: 问候\n  prompt: 你好\n  assertions: [{type: contains, value: hi}]\n",
        encoding="utf-8",
    )
    for name, outputs in (("x", ["hi Ana", "hi 你好"]), ("y", ["hi", "hi from y"])):
        lines = [json.dumps({"sample_id": sid, "output": out}, ensure_ascii=False) for sid, out in zip(["greet", "问候"], outputs, strict=True)]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "judge.py").write_text(JUDGE, encoding="utf-8")
    proc = omk(
        "eval", "--target", "replay:x.jsonl", "--target", "replay:y.jsonl",
        "--judge", f"cmd:{sys.executable} judge.py", "--format", "md,html,junit", "--out", "run", "--no-cache",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = tmp_path / "run"
    block = json.loads((run / "report.json").read_text(encoding="utf-8"))["pairwise"]
    assert [(v["sample_id"], v["winner"]) for v in block["verdicts"]] == [("greet", "a"), ("问候", "b")]
    md = (run / "summary.md").read_text(encoding="utf-8")
    assert "| 1 | 1 | 0 | 0 | 0 |" in md and "| 问候 | B better | the answer that greets by name \\| wins |" in md
    page = (run / "report.html").read_text(encoding="utf-8")
    assert '<span class="badge pw-b">B better</span>' in page and "replay:y.jsonl" in page
    junit = (run / "junit.xml").read_text(encoding="utf-8")
    assert 'name="pairwise:verdict:问候" value="b"' in junit and 'name="pairwise:b_better" value="1"' in junit
    assert not (run / "target-2" / "summary.md").read_text(encoding="utf-8").count("Pairwise")  # B's own run has no block
