"""An experiment in every report format: summary.md for a pull request, report.html with the
verdict, variant columns, the delta chart and sortable per-sample changes, junit.xml with a case
per sample and variant, and `omk report` re-rendering them all from report.json."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from experiment_reports import omk, synthetic_report
from junit_shape import check_junit_shape

from omk.report.assets import text as asset
from omk.report.experiment_tables import p_value
from omk.report.html_report import _script_hash, render_html
from omk.report.junit import render_junit
from omk.report.markdown import render_markdown
from omk.stats import AnalysisSettings

JS, EXPERIMENT_JS = asset("report.js"), asset("experiment.js")
UNTRUSTED = "x|<script>window.__pwned=1</script>`"


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def block_of(out: Path) -> dict:
    return json.loads(read(out / "report.json"))["experiment"]


def csp(page: str) -> str:
    return html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1))


def tables(markdown: str) -> list[list[str]]:
    """Every Markdown table (runs of lines starting with `|`), as its lines."""
    found, current = [], []
    for line in markdown.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            found.append(current)
            current = []
    return found + ([current] if current else [])


def cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def check_tables(markdown: str) -> None:
    """GitHub renders a table only when its second line is the delimiter row and every row has
    the header's cells; an unescaped pipe in a value would add one."""
    for table in tables(markdown):
        width = len(cells(table[0]))
        assert all(re.fullmatch(r":?-{3,}:?", c) for c in cells(table[1])), table[:2]
        assert len(cells(table[1])) == width
        for row in table[2:]:
            assert len(cells(row)) == width, row


# ---------------------------------------------------------------- the block the writers read


def test_the_block_carries_every_variants_results_and_the_require_outcome(progress_run, regress_run):
    proc, out = progress_run
    assert proc.returncode == 0, proc.stderr
    block = block_of(out)
    assert block["require"] == {"policy": "progress", "passed": True, "reason": "every treatment shows progress"}
    for name in ("baseline", "support-tone"):
        own = json.loads(read(out / "variants" / name / "report.json"))["results"]
        kept = block["runs"][name]["results"]
        assert [(r["sample_id"], r["status"], r["passed"]) for r in kept] == [(r["sample_id"], r["status"], r["passed"]) for r in own]
        for mine, theirs in zip(kept, own, strict=True):
            assert bool(mine["messages"]) is (not theirs["passed"])  # reasons for failures only
    hours = next(r for r in block["runs"]["baseline"]["results"] if r["sample_id"] == "en-hours")
    assert hours["messages"][0] == "below threshold 3.5: behavior 1.00"
    assert hours["composite"] == 3.0
    proc, out = regress_run
    assert proc.returncode == 1
    assert block_of(out)["require"]["passed"] is False


# ---------------------------------------------------------------- Markdown


def test_the_terminal_gives_each_variants_pass_rate_and_layers_with_their_intervals(progress_run):
    proc, _ = progress_run
    flat = " ".join(proc.stdout.split())  # a long line wraps between words at the terminal's width
    assert re.search(r"pass rate \(Wilson, 95%\): baseline 21% \[9%, 40%\] · support-tone 96% \[80%, 99%\]", flat), proc.stdout
    ci = r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]"
    assert re.search(rf"layers, 95% intervals: baseline fact {ci}, behavior {ci} · support-tone fact {ci}, behavior {ci}", flat), proc.stdout


def test_markdown_puts_the_verdict_first_then_the_variants_and_the_comparison(progress_run):
    _, out = progress_run
    md, block = read(out / "summary.md"), block_of(out)
    lines = md.splitlines()
    assert lines[0].startswith("## omk experiment · ")
    assert lines[2] == "### 🟢 " + block["verdict"]["headline"]
    assert lines[4] == f"**{block['verdict']['recommendation']}**"
    assert "`--require progress`: ✅ met" in md
    assert "| | **baseline** (control) | **support-tone** |" in md
    assert "| passed | 5/24 (21% [9%, 40%]) | 23/24 (96% [80%, 99%]) |" in md  # with the Wilson intervals
    assert re.search(r"\| composite \| 3\.33 \[\d\.\d\d, \d\.\d\d\] \| 4\.83 \[\d\.\d\d, \d\.\d\d\] \|", md)
    assert "| layer gate | ❌ fail: behavior | ✅ pass |" in md
    comp = block["comparisons"][0]
    ci = comp["composite"]["ci"]
    assert f"| composite | **{comp['composite']['mean']:+.2f}** | [{ci['low']:+.2f}, {ci['high']:+.2f}] | 18 / 6 / 0 |" in md
    assert f"McNemar p = {p_value(comp['pass_rate']['p_value'])}" in md
    assert "18 gained, 0 lost" in md
    assert f"| {comp['composite']['d_z']:.2f} | {comp['composite']['mde']:.2f} | 24 |" in md
    assert "**Regressed samples (0)**: none." in md
    assert "<details open><summary>Failures: support-tone (1)</summary>" in md  # zh-card fails on both
    assert "| zh-card | ❌ 1.00 | ❌ 1.00 | +0.00 |" in md
    assert "| en-hours | ❌ 3.00 | ✅ 5.00 | +2.00 |" in md
    assert md.index("### 🟢") < md.index("| passed |") < md.index("### support-tone vs baseline") < md.index("All samples")
    check_tables(md)


def test_markdown_of_a_regression_lists_the_regressed_samples_folded(regress_run):
    _, out = regress_run
    md, block = read(out / "summary.md"), block_of(out)
    assert md.splitlines()[2].startswith("### 🔴 REGRESS · baseline vs tone: Δ=-1.50")
    assert "**DO NOT SHIP — baseline scores 1.50 below tone; 18 samples regressed.**" in md
    assert "`--require no-regress`: ❌ NOT met — no-regress not met: baseline REGRESS (regression)" in md
    assert "<details><summary>Regressed samples (18)</summary>" in md  # more than 10: folded
    folded = md.split("<details><summary>Regressed samples (18)</summary>", 1)[1].split("</details>", 1)[0]
    regressed = [r["sample_id"] for r in block["comparisons"][0]["regressions"]]
    assert len(regressed) == 18
    for sid in regressed:
        assert f"| {sid} | ✅ 5.00 | ❌ 3.00 | -2.00 | score down, pass → fail |" in folded
    check_tables(md)


def test_markdown_shows_few_regressions_open_and_escapes_untrusted_names():
    report = synthetic_report(
        {"control": [4.0] * 22, UNTRUSTED: [4.0] * 20 + [3.0, None]}, ids=[f"s{i}" for i in range(21)] + [UNTRUSTED]
    )
    md = render_markdown(report)
    assert "<script>" not in md
    assert "&lt;script&gt;" in md
    assert "x\\|&lt;script&gt;" in md
    assert "**Regressed samples (2)**" in md
    assert "<details><summary>Regressed samples" not in md
    assert "| s20 | ✅ 4.00 | ❌ 3.00 | -1.00 | score down, pass → fail |" in md
    assert "| error | pass → fail, errored |" not in md  # an errored sample has no Δ...
    assert re.search(r"\| x\\\|&lt;script&gt;.*\| ✅ 4\.00 \| error \| — \| pass → fail, errored \|", md)  # ...but is listed
    assert "1 errored (control 0, x\\|&lt;script&gt;" in md
    check_tables(md)


def test_markdown_of_several_treatments_and_repeats():
    report = synthetic_report({"a": [3.0] * 6, "b": [4.0] * 6, "c": [2.0, 3.0, 3.0, 3.0, 3.0, 3.0]}, repeats=2)
    md = render_markdown(report)
    assert md.count("\n### b vs a · ") == 1
    assert md.count("\n### c vs a · ") == 1
    assert "| sample | a | b | c | Δ b | Δ c |" in md
    assert "| s000 | 0/2 ✅ | 2/2 ✅ | 0/2 ✅ | +1.00 | -1.00 |" in md
    assert "<details open><summary>Failures: a (12)</summary>" in md
    assert "| s000#1 | 3.00 |" in md
    check_tables(md)


def test_a_single_variant_and_a_comparison_without_scores_render_in_every_format():
    solo = synthetic_report({"only": [4.0, 3.0]})
    md = render_markdown(solo)
    assert md.splitlines()[2] == "### 🔵 SOLO · single variant, three-layer gate PASS @ threshold 3.5"
    assert "Δ" not in md
    assert 'id="delta-chart' not in render_html(solo)
    assert "SOLO" in render_html(solo)
    assert [s.get("name")[-4:] for s in check_junit_shape(render_junit(solo)).findall("testsuite")] == ["only"]
    unscored = synthetic_report({"c": [None, None, None], "t": [4.0, 4.0, 4.0]})
    md = render_markdown(unscored)
    assert "| composite | — | — | 0 / 0 / 0 | — | — | 0 |" in md
    page = render_html(unscored)
    assert "no confidence interval" in page
    assert 'class="ci-band"' not in page
    assert 'class="mean"' not in page
    root = check_junit_shape(render_junit(unscored))
    assert root.findall("testsuite")[0].get("errors") == "3"
    check_tables(md)


def test_markdown_without_an_experiment_is_the_run_summary(progress_run):
    _, out = progress_run
    report = json.loads(read(out / "report.json"))
    del report["experiment"]
    md = render_markdown(report)
    assert md.startswith(f"## omk · {report['run_id']}")
    assert "experiment" not in md
    assert "Regressed" not in md
    assert md == read(out / "variants" / "baseline" / "summary.md").replace(
        json.loads(read(out / "variants" / "baseline" / "report.json"))["run_id"], report["run_id"]
    )


# ---------------------------------------------------------------- HTML


def test_html_has_the_experiment_section_and_allows_only_its_two_scripts(regress_run):
    _, out = regress_run
    page = read(out / "report.html")
    block = block_of(out)
    assert page.index('<section id="experiment">') < page.index("<h2>Summary · control: tone</h2>")
    assert f"script-src '{_script_hash(JS)}' '{_script_hash(EXPERIMENT_JS)}';" in csp(page)
    assert page.count("<script>") == 2
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert 'class="badge lvl lvl-regress">REGRESS</span>' in page
    assert 'id="delta-chart-1"' in page
    assert 'class="ci-band"' in page
    ci = block["comparisons"][0]["composite"]["ci"]
    assert f'data-low="{ci["low"]}" data-high="{ci["high"]}"' in page
    assert page.count('<tr data-i="') == 24
    assert page.count('class="regressed"') == 18
    assert '<a href="variants/tone/report.html">tone</a>' in page


def test_html_escapes_untrusted_names_everywhere():
    report = synthetic_report({"control": [4.0] * 4, UNTRUSTED: [4.0, 3.0, 5.0, None]}, ids=["a", "b", UNTRUSTED, "d"])
    page = render_html(report)
    section = page.split('<section id="experiment">', 1)[1]
    assert "<script>window" not in section
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in section
    assert 'data-sample="x|&lt;script&gt;' in section
    assert "<title>x|&lt;script&gt;" in section


def test_html_chart_falls_back_to_a_histogram_for_many_samples():
    import random

    rng = random.Random(4)
    base = [round(rng.uniform(2, 4.5), 2) for _ in range(400)]
    report = synthetic_report({"c": base, "t": [round(min(5.0, b + rng.gauss(0.3, 0.2)), 2) for b in base]})
    page = render_html(report)
    assert 'class="dot' not in page
    assert page.count('<rect class="bin') > 5
    counts = [int(n) for n in re.findall(r'<rect class="bin [a-z]+" data-count="(\d+)"', page)]
    assert sum(counts) == 400
    few = render_html(synthetic_report({"c": base[:30], "t": base[:30]}))
    assert few.count('<circle class="dot tie"') == 30  # every change 0: a stack of ties at 0


def test_html_without_an_experiment_is_unchanged(progress_run):
    _, out = progress_run
    report = json.loads(read(out / "report.json"))
    del report["experiment"]
    page = render_html(report)
    assert 'id="experiment"' not in page
    assert page.count("<script>") == 1
    assert f"script-src '{_script_hash(JS)}'; base-uri" in csp(page)


# ---------------------------------------------------------------- JUnit


def test_junit_has_a_suite_per_variant_and_a_case_per_sample(progress_run):
    _, out = progress_run
    root = check_junit_shape(read(out / "junit.xml"))
    block = block_of(out)
    suites = root.findall("testsuite")
    assert [s.get("name").rsplit(" · ", 1)[1] for s in suites] == ["baseline", "support-tone", "verdict"]
    for suite, variant in zip(suites, block["variants"], strict=False):
        cases = suite.findall("testcase")
        assert {c.get("classname") for c in cases} == {variant["name"]}
        assert [c.get("name") for c in cases] == [r["sample_id"] for r in block["runs"][variant["name"]]["results"]]
        assert int(suite.get("failures")) == variant["samples"] - variant["passed"]
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert props["variant"] == variant["name"]
        assert props["role"] == variant["role"]
        assert props["experiment:verdict"] == "PROGRESS"
        assert props["experiment:pair:support-tone"] == "PROGRESS"
        low, high = (float(x) for x in props["composite_ci"].split(","))  # each variant's figures carry their interval
        assert low <= float(props["composite"]) <= high
        low, high = (float(x) for x in props["pass_rate_ci"].split(","))
        assert low <= variant["passed"] / variant["samples"] <= high
    hours = suites[0].find("testcase[@name='en-hours']").find("failure")
    assert hours.get("message") == "below threshold 3.5: behavior 1.00"
    assert hours.get("type") == "omk.failed"
    assert "starts_with 'Hi, thanks for reaching out!'" in hours.text
    assert suites[1].find("testcase[@name='en-hours']").find("failure") is None
    (verdict,) = suites[2].findall("testcase")
    assert verdict.get("name") == "require progress"
    assert verdict.get("classname") == "experiment"
    assert verdict.find("failure") is None
    assert "Verdict: PROGRESS" in verdict.find("system-out").text
    assert root.get("tests") == "49"
    assert root.get("failures") == str(19 + 1)


def test_junit_fails_the_verdict_case_when_require_is_not_met(regress_run):
    _, out = regress_run
    root = check_junit_shape(read(out / "junit.xml"))
    verdict = root.findall("testsuite")[-1].find("testcase")
    failure = verdict.find("failure")
    assert failure is not None
    assert failure.get("type") == "omk.verdict"
    assert failure.get("message") == "no-regress not met: baseline REGRESS (regression)"
    assert "REGRESS · baseline vs tone" in failure.text


def test_junit_errors_are_errors_and_no_require_means_no_verdict_case(crash_run):
    proc, out = crash_run
    assert proc.returncode == 1, proc.stderr  # a sample errored: the run needs attention, whatever the verdict
    root = check_junit_shape(read(out / "junit.xml"))
    suites = {s.get("name").rsplit(" · ", 1)[1]: s for s in root.findall("testsuite")}
    assert list(suites) == ["baseline", "crashy"]  # no --require: the verdict is not a test
    fragile = suites["crashy"].find("testcase[@name='fragile']")
    assert fragile.get("classname") == "crashy"
    assert fragile.find("failure") is None
    error = fragile.find("error")
    assert error is not None
    assert "crashed on purpose" in error.get("message")
    assert not error.get("message").startswith("error: ")
    assert suites["baseline"].find("testcase[@name='fragile']").find("error") is None
    assert suites["crashy"].get("errors") == "1"
    assert suites["crashy"].get("failures") == "1"  # "never" fails on both
    md = read(out / "summary.md")
    assert "| fragile | ✅ 5.00 | error | — | pass → fail, errored |" in md  # a regression with no Δ
    assert "| fragile | error | error: command exited with code 3: crashed on purpose |" in md
    check_tables(md)


def test_junit_of_an_older_block_without_results_uses_the_per_sample_outcomes():
    report = synthetic_report({"c": [4.0, 3.0, None], "t": [4.0, 4.0, 4.0]})
    for run in report["experiment"]["runs"].values():
        del run["results"]
    root = check_junit_shape(render_junit(report))
    c, t = root.findall("testsuite")
    assert [x.get("name") for x in c.findall("testcase")] == ["s000", "s001", "s002"]
    assert c.find("testcase[@name='s001']/failure") is not None
    assert c.find("testcase[@name='s002']/error") is not None
    assert t.get("failures") == "0"
    assert t.get("errors") == "0"


# ---------------------------------------------------------------- omk report


def test_omk_report_re_renders_an_experiment_identically(progress_run, tmp_path):
    _, out = progress_run
    written = {name: (out / name).read_bytes() for name in ("summary.md", "report.html", "junit.xml")}
    again = omk("report", str(out), "--format", "md,html,junit", "--out", str(tmp_path))
    assert again.returncode == 0, again.stderr
    for name, data in written.items():
        assert (tmp_path / name).read_bytes() == data, name
    zh = omk("report", str(out), "--format", "md,html", "--out", str(tmp_path / "zh"), "--lang", "zh")
    assert zh.returncode == 0, zh.stderr
    assert "## omk 实验 · " in read(tmp_path / "zh" / "summary.md")
    assert "95% 置信区间" in read(tmp_path / "zh" / "report.html")


def test_the_footer_states_the_settings():
    report = synthetic_report({"c": [3.0, 4.0], "t": [4.0, 4.0]}, settings=AnalysisSettings(resamples=500, seed=9, trivial=0.25))
    md = render_markdown(report)
    assert "paired bootstrap, 500 resamples, seed 9; trivial ±0.25" in md
    ET.fromstring(render_junit(report).encode())  # and it still makes valid XML
