"""The pairwise judge's verdicts (`experiment.pairwise`, two targets compared) in summary.md,
report.html and junit.xml: from a report dict, from `omk report`, from a report written before
two-target runs became experiments, and from a real `omk eval --target A --target B` run."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from cli_support import run_omk
from junit_shape import check_junit_shape
from pairwise_reports import orders, pair_block, with_pairwise
from report_factory import make_report

from omk.engine.pairwise import position as _position
from omk.engine.pairwise import summary as _summary
from omk.records.experiment_block import PairwiseVerdict
from omk.records.fields import Fields
from omk.report.assets import text as asset
from omk.report.html_report import _script_hash, render_html
from omk.report.junit import build_junit, render_junit
from omk.report.markdown import render_markdown

JS, EXPERIMENT_JS = asset("report.js"), asset("experiment.js")


def the_pair(report: dict) -> dict:
    return report["experiment"]["pairwise"]["pairs"][0]


# --- Markdown ---------------------------------------------------------------------------------------


def test_markdown_has_the_tally_and_each_verdict_with_its_reason():
    md = render_markdown(with_pairwise())
    assert "### Pairwise: A vs B" in md
    assert "A: `replay:a.jsonl` · B: `cmd:python agent_v1.py` · judge: openai:gpt-4o" in md
    assert "| A better | B better | ties | errored | skipped |\n| ---: | ---: | ---: | ---: | ---: |\n| 1 | 1 | 1 | 1 | 0 |" in md
    assert "| sample | key | verdict | reason |" in md  # the tie verdict has its own key
    assert "| cr-sql-注入-zh | pairwise | A better | A 识别了 SQL 注入 \\| 并给出参数化查询 |" in md
    assert "| cs-refund-en | pairwise | error | A (replay-a.jsonl) failed on this sample: HTTP 503 &lt;html&gt; |" in md
    assert "B's win rate (pairwise): 50% of 2 decisive verdicts (95% CI 9%–91%, Wilson; sign test p = 1) · ties 0" in md
    assert "B's win rate (tie-pairwise): — (no decisive verdict)" in md
    assert "both orders asked; position-inconsistent (a tie): 0 / 3" in md
    assert "| cr-sql-注入-zh | tie-pairwise | tie | both fine |" in md
    row = next(line for line in md.splitlines() if line.startswith("| cr-read-before-review |"))
    reason = row.split(" | ")[-1]
    assert reason.startswith("B 漏掉了 MD5 的问题，reason")
    assert reason.endswith("… |")
    assert len(reason) <= 205
    assert "END-OF-REASON" not in row  # cut short, no HTML from the answer
    assert "<script>" not in md
    assert "<img" not in md


def test_markdown_hides_the_key_column_when_every_verdict_is_the_default_one():
    report = with_pairwise()
    the_pair(report)["verdicts"] = the_pair(report)["verdicts"][:3]
    md = render_markdown(report)
    assert "| sample | verdict | reason |" in md
    assert "| cr-sql-注入-zh | A better |" in md


def test_markdown_folds_a_long_verdict_list_and_speaks_chinese():
    report = with_pairwise(keys=tuple(f"k{i}" for i in range(8)))  # 8 × 3 + 1 verdicts
    md = render_markdown(report)
    assert "<details><summary>Verdicts (25)</summary>" in md
    zh = render_markdown(with_pairwise(), lang="zh")
    assert "### 两两对比: A 对 B" in zh
    assert "| A 更好 | B 更好 | 平局 | 出错 | 已跳过 |" in zh
    assert "| 用例 | 键 | 判定 | 理由 |" in zh
    assert "| A 更好 | A 识别了" in zh


def test_a_report_without_pairwise_has_no_pairwise_section():
    report = make_report()
    assert "Pairwise" not in render_markdown(report)
    assert 'id="pairwise"' not in render_html(report)
    assert not [p for p in build_junit(report).iter("property") if p.get("name").startswith("pairwise:")]


# --- HTML -------------------------------------------------------------------------------------------


def test_html_section_in_the_category_tables_style():
    page = render_html(with_pairwise(votes=True))
    section = page[page.index('<h2 id="pairwise">') : page.index('<h2>score distribution</h2>')]
    assert "Pairwise: A vs B" in section
    assert "<code>replay:a.jsonl</code>" in section
    assert "openai:gpt-4o" in section
    tally = re.search(r'<table class="pairwise-tally">.*?</table>', section).group(0)
    assert re.findall(r'<td data-key="(\w+)">(\d+)</td>', tally) == [
        ("a_better", "1"), ("b_better", "1"), ("ties", "1"), ("errored", "1"), ("skipped", "0")
    ]  # fmt: skip
    rows = re.findall(r'<tr class="verdict" data-status="(\w+)">(.*?)</tr>', section)
    assert [status for status, _ in rows] == ["ok", "ok", "error", "ok"]
    assert '<span class="badge pw-a">A better</span>' in rows[0][1]
    assert '<span class="badge pw-b">B better</span>' in rows[1][1]
    assert '<span class="badge error">error</span>' in rows[2][1]
    assert '<span class="badge skip">tie</span>' in rows[3][1]
    assert "END-OF-REASON" in rows[1][1]  # the page keeps the whole reason
    assert '<ul class="votes"><li>A first: <code>openai:gpt-4o</code>: A — A is precise</li>' in rows[0][1]
    assert "B&#x27;s win rate (pairwise): 50% of 2 decisive verdicts" in section
    for _, cells in rows:  # each sample links to its own panel (the page shows it on the hash change)
        target, sid = re.search(r'<a href="#(sample-\d+)"><code>([^<]+)</code></a>', cells).groups()
        panel = re.search(rf'<article class="detail(?: failing)?" id="{target}"(?: hidden)?>.*?</article>', page, re.S).group(0)
        assert sid in panel
    assert "addEventListener('hashchange'" in page


def test_html_pairwise_stays_self_contained_and_escaped():
    page = render_html(with_pairwise(votes=True))
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "no network resource"
    assert not re.search(r"""url\(|@import|<link|<iframe|<img""", page)
    assert "<script>window.__pwned" not in page
    assert 'onerror="window' not in page
    assert page.count("<script>") == 2
    assert _script_hash(JS) in page
    assert _script_hash(EXPERIMENT_JS) in page  # an experiment's page
    zh = render_html(with_pairwise(), lang="zh")
    assert "两两对比: A 对 B" in zh
    assert "<th>A 更好</th>" in zh
    assert "<th>已跳过</th>" in zh
    assert ">A 更好</span>" in zh


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
        "pairwise:inconsistent": "0",
        "pairwise:win_rate": "0.5",
        "pairwise:win_rate:low": "0.0945",
        "pairwise:win_rate:high": "0.9055",
        "pairwise:win_rate:llm_comparison": "0.5",
        "pairwise:win_rate:llm_comparison:low": "0.0945",
        "pairwise:win_rate:llm_comparison:high": "0.9055",
    }
    assert props["pairwise:verdict:cr-sql-注入-zh"] == "a"
    assert props["pairwise:verdict:cr-read-before-review:llm_comparison"] == "b"
    assert props["pairwise:verdict:cs-refund-en"] == "error"
    assert props["pairwise:verdict:cr-sql-注入-zh:tie-llm_comparison"] == "tie"
    assert len(root.findall(".//testcase")) == 6  # a case per sample and variant; verdicts never become test cases
    control_suite = root.findall("testsuite")[0]
    assert any(p.get("name") == "pairwise:a_better" for p in control_suite.iter("property"))  # on the control's suite, once
    assert sum(1 for p in root.iter("property") if p.get("name") == "pairwise:a_better") == 1


def test_junit_property_names_stay_valid_xml_whatever_the_sample_id():
    report = with_pairwise()
    the_pair(report)["verdicts"][0]["sample_id"] = "bell\x07-id"
    props = {p.get("name") for p in check_junit_shape(render_junit(report)).iter("property")}
    assert "pairwise:verdict:bell\\x07-id" in props


# --- both orders, several treatments, old reports ---------------------------------------------------


def inconsistent_report() -> dict:
    """The second verdict made position-inconsistent: each order preferred the answer shown first."""
    report = with_pairwise()
    pair = the_pair(report)
    v = pair["verdicts"][1]
    first, second = orders("a", "b")
    v.update(preference=0, winner="tie", scores={"a": 0, "b": 0}, position="first", orders={"a_first": first.to_json(), "b_first": second.to_json()})
    v["reason"] = "the two orders disagree (A first: A better; B first: B better), so a tie"
    verdicts = [PairwiseVerdict.from_json(Fields(x, "verdicts")) for x in pair["verdicts"]]
    pair["summary"], pair["position"] = _summary(verdicts), _position(verdicts)
    return report


def test_a_position_inconsistent_verdict_is_a_tie_and_is_counted_everywhere():
    report = inconsistent_report()
    md = render_markdown(report)
    assert "| 1 | 0 | 2 | 1 | 0 |" in md  # A better, B better, ties (one of them the disagreement), errored, skipped
    assert "| cr-read-before-review | pairwise | tie (orders disagree) | the two orders disagree (A first: A better; B first: B better), so a tie |" in md
    assert "both orders asked; position-inconsistent (a tie): 1 / 3 (each order preferred the answer shown first 1)" in md
    page = render_html(report)
    assert re.search(r'<tr class="verdict" data-status="ok" data-position="first">.*?tie \(orders disagree\)', page)
    props = {p.get("name"): p.get("value") for p in build_junit(report).iter("property")}
    assert props["pairwise:inconsistent"] == "1"
    assert props["pairwise:verdict:cr-read-before-review"] == "tie"
    zh = render_markdown(report, lang="zh")
    assert "平局（两种顺序结论不一）" in zh
    assert "两种顺序各问一次；顺序不一致（记为平局）: 1 / 3" in zh


def test_several_treatments_get_a_section_each():
    report = with_pairwise(pairs=2)
    md = render_markdown(report)
    assert "### Pairwise: A vs B — cmd-python-agent_v1.py" in md
    assert "### Pairwise: A vs B — cmd-python-agent_v2.py" in md
    page = render_html(report)
    assert '<h2 id="pairwise">' in page
    assert '<h2 id="pairwise-2">' in page
    props = {p.get("name"): p.get("value") for p in build_junit(report).iter("property")}
    assert props["pairwise[cmd-python-agent_v2.py]:b_better"] == "1"
    assert props["pairwise[cmd-python-agent_v1.py]:verdict:cs-refund-en"] == "error"


def test_a_report_from_before_experiments_still_shows_its_verdicts():
    """Two-target runs used to write the verdicts as a top-level `pairwise` block of A's report."""
    report = make_report()
    old = pair_block()
    for v in old["verdicts"]:
        v.pop("orders"), v.pop("position")
    for key in ("control", "treatment", "position", "win_rate"):
        old.pop(key)
    report["pairwise"] = {**old, "judge": ["openai:gpt-4o"], "reports": [".", "target-2"]}
    old["verdicts"][0]["votes"] = [{"judge": "openai:gpt-4o", "preference": 1, "reason": "A is precise"}]
    md = render_markdown(report)
    assert "| 1 | 1 | 1 | 1 | 0 |" in md
    assert "| cr-sql-注入-zh | pairwise | A better |" in md
    assert "win rate" not in md
    assert '<li><code>openai:gpt-4o</code>: A — A is precise</li>' in render_html(report)
    props = {p.get("name"): p.get("value") for p in build_junit(report).iter("property")}
    assert props["pairwise:a_better"] == "1"
    assert "pairwise:win_rate" not in props


# --- re-rendering and a real run --------------------------------------------------------------------


def omk(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, timeout=120)


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
prompt = request["prompt"]
first, second = prompt.split("## Answer of assistant B")  # the answer shown first, then the one shown second
good = ("Ana", "from y")  # x greets by name on `greet`, y on `问候`
prefer = 1 if any(g in first.split("## Answer of assistant A")[1] for g in good) else 2
print(json.dumps({"output": json.dumps({"reason": "the answer that greets by name | wins", "preference": prefer})}))
"""

FIRST_JUDGE = """
import json, sys
sys.stdin.readline()
print(json.dumps({"output": json.dumps({"reason": "the first answer is better", "preference": 1})}))
"""


def two_targets(tmp_path: Path, judge: str) -> subprocess.CompletedProcess:
    (tmp_path / "eval-samples.yaml").write_text(
        "- sample_id: greet\n  prompt: hi\n  assertions: [{type: contains, value: hi}]\n"
        "- sample_id: 问候\n  prompt: 你好\n  assertions: [{type: contains, value: hi}]\n",
        encoding="utf-8",
    )
    for name, outputs in (("x", ["hi Ana", "hi 你好"]), ("y", ["hi", "hi from y"])):
        lines = [json.dumps({"sample_id": sid, "output": out}, ensure_ascii=False) for sid, out in zip(["greet", "问候"], outputs, strict=True)]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "judge.py").write_text(judge, encoding="utf-8")
    return omk(
        "eval", "--target", "replay:x.jsonl", "--target", "replay:y.jsonl",
        "--judge", f"cmd:{sys.executable} judge.py", "--format", "md,html,junit", "--out", "run", "--no-cache",
        cwd=tmp_path,
    )  # fmt: skip


def test_a_two_target_run_writes_the_verdicts_into_every_format(tmp_path):
    proc = two_targets(tmp_path, JUDGE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = tmp_path / "run"
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert "pairwise" not in report  # the verdicts live in the experiment block now
    pair = the_pair(report)
    assert (pair["control"], pair["treatment"]) == ("replay-x.jsonl", "replay-y.jsonl")
    assert [(v["sample_id"], v["winner"], v["position"]) for v in pair["verdicts"]] == [("greet", "a", None), ("问候", "b", None)]
    assert pair["verdicts"][1]["orders"] == {
        "a_first": {"winner": "b", "reason": "the answer that greets by name | wins"},
        "b_first": {"winner": "b", "reason": "the answer that greets by name | wins"},
    }
    assert pair["position"] == {"consistent": 2, "inconsistent": 0, "first": 0, "second": 0, "partial": 0}
    assert pair["win_rate"][0]["rate"] == 0.5
    assert pair["win_rate"][0]["decisive"] == 2
    md = (run / "summary.md").read_text(encoding="utf-8")
    assert "| 1 | 1 | 0 | 0 | 0 |" in md
    assert "| 问候 | B better | the answer that greets by name \\| wins |" in md
    page = (run / "report.html").read_text(encoding="utf-8")
    assert '<span class="badge pw-b">B better</span>' in page
    assert "replay:y.jsonl" in page
    junit = (run / "junit.xml").read_text(encoding="utf-8")
    assert 'name="pairwise:verdict:问候" value="b"' in junit
    assert 'name="pairwise:b_better" value="1"' in junit
    for name in ("replay-x.jsonl", "replay-y.jsonl"):  # each variant's own run has no block
        assert "Pairwise" not in (run / "variants" / name / "summary.md").read_text(encoding="utf-8")
    assert "A better 1 · B better 1 · tie 0 · errored 0 · skipped 0" in proc.stdout


def test_a_judge_that_always_prefers_the_first_answer_gives_ties_not_wins(tmp_path):
    proc = two_targets(tmp_path, FIRST_JUDGE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pair = the_pair(json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8")))
    assert [(v["winner"], v["position"]) for v in pair["verdicts"]] == [("tie", "first"), ("tie", "first")]
    assert pair["summary"]["a_better"] == pair["summary"]["b_better"] == 0
    assert pair["summary"]["ties"] == 2
    assert pair["position"] == {"consistent": 0, "inconsistent": 2, "first": 2, "second": 0, "partial": 0}
    assert pair["win_rate"][0]["rate"] is None
    assert pair["win_rate"][0]["tie_rate"] == 1.0
    assert pair["verdicts"][0]["orders"]["a_first"]["winner"] == "a"
    assert pair["verdicts"][0]["orders"]["b_first"]["winner"] == "b"
    assert "position-inconsistent (a tie): 2 / 2 (each order preferred the answer shown first 2)" in proc.stdout


def test_a_pair_read_back_writes_the_json_it_was_read_from():
    from omk.records.experiment_block import Pair

    for report in (with_pairwise(votes=True), inconsistent_report()):
        written = the_pair(report)
        back = Pair.from_json(Fields(written, "report.json"), ["openai:gpt-4o"])
        assert back.to_json() == written
        assert back.verdicts[0].a_first is not None
        assert back.verdicts[1].b_first is not None
