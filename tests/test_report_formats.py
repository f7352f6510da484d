"""JUnit XML, Markdown and HTML reports from a report.json, and `omk report` re-rendering."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from cli_support import run_omk
from junit_shape import check_junit_shape
from report_factory import XSS, make_report

from omk.report import FORMATS, write_formats
from omk.report.assets import text as asset
from omk.report.html_report import _script_hash, render_html
from omk.report.junit import render_junit
from omk.report.markdown import render_markdown

ROOT = Path(__file__).resolve().parent.parent

def test_junit_has_one_case_per_result_with_failures_and_errors():
    root = check_junit_shape(render_junit(make_report()))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert list(cases) == ["cr-sql-注入-zh", "cr-read-before-review", "cs-refund-en"]
    assert cases["cr-sql-注入-zh"].find("failure") is None
    assert cases["cr-sql-注入-zh"].find("error") is None
    failure = cases["cr-read-before-review"].find("failure")
    assert failure.get("message") == "below threshold 3.5: fact 1.00, judge 2.00"
    text = failure.text
    assert 'contains \'MD5\': output does not contain "MD5"' in text
    assert "  contains 'bcrypt'" in text  # a failed set lists its failed children beneath it
    assert "not regex 'fine'" in text
    assert "judge rubric 2/5: missed the MD5 weakness" in text
    assert "answer_relevancy" not in text  # skipped is not failed
    error = cases["cs-refund-en"].find("error")
    assert error.get("message").startswith("target failed after 3 attempts")
    assert cases["cr-read-before-review"].get("classname") == "eval-samples"
    out = cases["cr-read-before-review"].find("system-out").text
    assert "\\x00\\x1b[31m" in out
    assert XSS in out  # control characters made legal, markup kept as text


def test_junit_names_each_repeat():
    root = check_junit_shape(render_junit(make_report(repeats=3)))
    names = [c.get("name") for c in root.iter("testcase")]
    assert names[:3] == ["cr-sql-注入-zh#0", "cr-sql-注入-zh#1", "cr-sql-注入-zh#2"]
    assert len(names) == 9
    assert root.find("testsuite").get("tests") == "9"


def test_junit_without_repeat_field_and_empty_run():
    report = make_report()
    for r in report["results"]:
        r.pop("repeat", None)
    root = check_junit_shape(render_junit(report))
    assert [c.get("name") for c in root.iter("testcase")][0] == "cr-sql-注入-zh"
    empty = make_report(results=[])
    root = check_junit_shape(render_junit(empty))
    assert root.get("tests") == "0"


def test_markdown_summary_escapes_untrusted_text():
    md = render_markdown(make_report())
    assert "**❌ gate failed** · 1/3 passed" in md
    assert "| 3.00 [1.00, 5.00] | 5.00 (1 sample, no interval) | 3.25 [2.00, 4.50] | 3.71 [2.67, 4.75] | $0.0212 | 9.0 s |" in md
    assert "### Failures (2)" in md
    assert "<script>" not in md
    assert "<html>" not in md
    assert "&lt;html&gt;" in md
    assert "argon2\\|scrypt" in md  # a pipe cannot break the table
    failure_rows = [line for line in md.splitlines() if line.startswith("| cr-read-before-review | 2.67 |")]
    assert len(failure_rows) == 1
    assert len(re.findall(r"(?<!\\)\|", failure_rows[0])) == 4
    zh = render_markdown(make_report(), lang="zh")
    assert "门禁未通过" in zh
    assert "失败详情" in zh


def test_html_is_self_contained_and_escapes_everything():
    page = render_html(make_report())
    assert page.startswith("<!DOCTYPE html>")
    assert '<meta charset="utf-8">' in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "no network resource"
    assert "<script>window.__pwned" not in page
    assert "onerror=\"window" not in page
    assert page.count("&lt;script&gt;window.__pwned=1&lt;/script&gt;") >= 4  # prompt, output, tool output, judge
    assert page.count("<script>") == 1  # the page's own script only
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src &#x27;none&#x27;" in csp
    assert _script_hash(asset("report.js")) in csp
    assert f"<script>{asset('report.js')}</script>" in page  # the hash covers exactly the script that is there
    assert "Noto Sans CJK SC" in page
    assert "Microsoft YaHei" in page
    assert "cr-sql-注入-zh" in page
    assert "识别了注入并给出修复" in page


def test_repeats_section_is_summarised_in_md_and_html():
    report = make_report(repeats=2)
    report["repeats"] = {"n": 2, "samples": 3, "always_passed": 1, "flaky": 0, "never_passed": 2, "per_sample": []}
    line = "2 runs per sample: 1 of 3 samples passed every run, 0 flaky, 2 never passed"
    assert line in render_markdown(report)
    assert line in render_html(report)
    assert "runs per sample" not in render_markdown(make_report())


def _flaky_repeats() -> dict:
    ci = {"low": 0.42, "high": 0.91, "level": 0.95, "method": "expanded", "resamples": 10000, "seed": 0}
    return {
        "n": 3, "samples": 2, "always_passed": 1, "flaky": 1, "never_passed": 0,
        "pass_at_k": [{"k": 1, "samples": 2, "mean": 0.6667, "ci": ci}, {"k": 3, "samples": 2, "mean": 1.0, "ci": None}],
        "pass_hat_k": [{"k": 1, "samples": 2, "mean": 0.6667, "ci": ci}, {"k": 3, "samples": 2, "mean": 0.5, "ci": None}],
        "per_sample": [
            {"sample_id": "flaky <b>one</b>", "runs": 3, "errored": 0, "passed": 1, "pass_rate": 0.33,
             "composite": {"mean": 3.5, "stddev": 0.71, "min": 3.0, "max": 4.0},
             "pass_at_k": [0.3333, 0.6667, 1.0], "pass_hat_k": [0.3333, 0.0, 0.0]},
            {"sample_id": "steady", "runs": 3, "errored": 0, "passed": 3, "pass_rate": 1.0,
             "composite": {"mean": 5.0, "stddev": 0.0, "min": 5.0, "max": 5.0},
             "pass_at_k": [1.0, 1.0, 1.0], "pass_hat_k": [1.0, 1.0, 1.0]},
        ],
    }  # fmt: skip


def test_every_format_shows_pass_at_k_and_pass_hat_k_with_their_intervals():
    from io import StringIO

    from rich.console import Console

    from omk.report.terminal import print_summary

    report = make_report(repeats=3)
    report["repeats"] = _flaky_repeats()
    md, page = render_markdown(report), render_html(report)
    assert "| 1 | 0.67 [0.42, 0.91] | 0.67 [0.42, 0.91] |" in md
    assert "| 3 | 1.00 | 0.50 |" in md
    assert "flaky &lt;b&gt;one&lt;/b&gt; ⚠️ | 1/3 | 3.50 ± 0.71 | 0.33 · 0.67 · 1.00 | 0.33 · 0.00 · 0.00 |" in md
    assert '<table class="pass-k">' in page
    assert "<td>0.67 [0.42, 0.91]</td>" in page
    assert '<tr class="flaky"><td>flaky &lt;b&gt;one&lt;/b&gt;</td><td>1/3</td>' in page
    assert "<b>one</b>" not in page
    junit = render_junit(report)
    assert 'name="pass@k:1" value="0.67 [0.42, 0.91]"' in junit
    assert 'name="pass^k:3" value="0.50"' in junit
    assert 'name="repeats:flaky" value="1"' in junit
    console = Console(file=StringIO(), width=120, record=True)
    print_summary(report, console, "zh")
    text = console.export_text()
    assert "重复运行（每条用例 3 次）" in text
    assert "pass@3" in text
    assert "0.67 [0.42, 0.91]" in text
    assert text.index("flaky <b>one</b>") < text.index("steady")


def test_html_chart_counts_scores_and_errors():
    page = render_html(make_report())
    counts = [int(n) for n in re.findall(r'<rect class="bin" data-count="(\d+)"', page)]
    assert len(counts) == 9
    assert counts[3] == 1
    assert counts[7] == 1
    assert counts[8] == 1
    assert sum(counts) == 3  # 2.67, 4.75, one error


def test_write_formats_writes_every_format_and_json_first(tmp_path):
    written = write_formats(tmp_path, make_report(), ["html", "md", "junit"])
    assert [p.name for p in written] == ["report.json", "report.html", "summary.md", "junit.xml"]
    assert set(FORMATS) == {"json", "junit", "md", "html"}
    from omk.core.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown format"):
        write_formats(tmp_path, make_report(), ["pdf"])


def omk(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, drop=(), timeout=60)


def test_omk_report_re_renders_a_finished_run(tmp_path):
    report = make_report()
    (tmp_path / "report.json").write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    before = (tmp_path / "report.json").read_bytes()
    proc = omk("report", str(tmp_path), "--format", "junit,md,html")
    assert proc.returncode == 0, proc.stderr
    assert [Path(line).name for line in proc.stdout.split()] == ["junit.xml", "summary.md", "report.html"]
    assert (tmp_path / "report.json").read_bytes() == before  # the run's own report is left alone
    check_junit_shape((tmp_path / "junit.xml").read_text(encoding="utf-8"))
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == render_html(report)

    out = tmp_path / "elsewhere"
    proc = omk("report", str(tmp_path / "report.json"), "--format", "md", "--out", str(out), "--lang", "zh")
    assert proc.returncode == 0, proc.stderr
    assert "门禁未通过" in (out / "summary.md").read_text(encoding="utf-8")


def test_omk_report_rejects_bad_input_with_one_line(tmp_path):
    missing = omk("report", str(tmp_path / "nope"), "--format", "html")
    assert missing.returncode == 2
    assert "no such report" in missing.stderr
    assert "Traceback" not in missing.stderr
    (tmp_path / "report.json").write_text("{broken", encoding="utf-8")
    broken = omk("report", str(tmp_path), "--format", "html")
    assert broken.returncode == 2
    assert "report.json:1: not valid JSON" in broken.stderr
    (tmp_path / "report.json").write_text('{"format": "other/9"}', encoding="utf-8")
    other = omk("report", str(tmp_path), "--format", "html")
    assert other.returncode == 2
    assert "format: expected 'omk-report/1'" in other.stderr
    (tmp_path / "report.json").write_text(json.dumps(make_report()), encoding="utf-8")
    unknown = omk("report", str(tmp_path), "--format", "pdf")
    assert unknown.returncode == 2
    assert "unknown format(s) pdf" in unknown.stderr
