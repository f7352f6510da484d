"""The triggering report: the rates and their Wilson intervals (against scipy), the routing matrix,
the paired change with McNemar's test, report.json's block read back, and every format showing it
(the HTML one in a headless Chromium)."""

from __future__ import annotations

import json
import random

import msgspec
import pytest
from cli_support import run_omk
from scipy.stats import binomtest

from omk.records import AssertionResult, SampleResult, ToolCall, Trace
from omk.records.document import ReportDocument
from omk.records.triggering import TriggerCase
from omk.report.junit import render_junit
from omk.report.markdown import render_markdown
from omk.samples.model import Layer, Sample, Status
from omk.scoring.digest import trigger_cases
from omk.scoring.triggering import rate, trigger_changes, triggering


def case(skill: str, should: bool, fired: bool, sid: str, others: tuple[str, ...] = (), repeat: int = 0) -> TriggerCase:
    return TriggerCase(skill, should, fired, sid, repeat, None, others)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 7), (3, 7), (7, 7), (1, 20), (19, 20), (50, 120)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_wilson_intervals_match_scipy(k, n, level):
    ours = rate(k, n, level)
    ci = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    assert ours.low == pytest.approx(ci.low, abs=5e-5)
    assert ours.high == pytest.approx(ci.high, abs=5e-5)
    assert ours.value == round(k / n, 4)


def test_no_case_has_no_interval():
    assert rate(0, 0).value is None
    assert rate(0, 0).low is None


CASES = [
    case("pdf", True, True, "pdf-1"),
    case("pdf", True, True, "pdf-2"),
    case("pdf", True, False, "pdf-3"),  # missed
    case("pdf", False, False, "near-1"),
    case("pdf", False, True, "near-2"),  # fired when it must not
    case("docx", True, False, "docx-1", others=("pdf",)),  # routed to the wrong skill
    case("docx", True, True, "docx-2"),
]


def test_rates_lists_and_routing_matrix():
    trig = triggering(CASES, ("pdf", "docx", "xlsx"))
    assert trig is not None
    pdf = next(s for s in trig.skills if s.skill == "pdf")
    assert (pdf.recall.k, pdf.recall.n) == (2, 3)
    assert (pdf.false_triggers.k, pdf.false_triggers.n) == (1, 2)
    assert (pdf.precision.k, pdf.precision.n) == (2, 3)
    assert pdf.missed == ("pdf-3",)
    assert pdf.false_triggered == ("near-2",)
    docx = next(s for s in trig.skills if s.skill == "docx")
    assert docx.warnings == ["no negative controls: a description that fires on everything scores perfect recall"]
    rows = {r.expected: r for r in trig.routing}
    assert rows["pdf"].fired == {"pdf": 2, "(none)": 1}
    assert rows["pdf"].cases == 3
    assert rows["docx"].fired == {"pdf": 1, "docx": 1}
    assert rows["docx"].right == 1
    assert trig.columns == ["pdf", "docx", "xlsx", "(none)"]  # xlsx installed and never fired: a dead skill shows
    assert triggering([], ("pdf",)) is None


def test_a_call_to_a_skill_that_is_not_installed_is_counted_apart_and_named():
    cases = [
        case("pdf", True, False, "s1", others=("pdf-magic",)),  # only a made-up name: no route at all
        case("pdf", True, True, "s2", others=("pdf-magic",)),  # the right skill, and a made-up one
        case("pdf", True, False, "s3", others=("docx", "pfd")),  # a collision, and a misspelling
        case("pdf", True, False, "s4"),
        case("docx", True, True, "d1"),
    ]
    trig = triggering(cases, ("pdf", "docx"))
    assert trig is not None
    rows = {r.expected: r for r in trig.routing}
    assert rows["pdf"].fired == {"(not installed)": 3, "pdf": 1, "docx": 1, "(none)": 1}
    assert rows["pdf"].cases == 4
    assert rows["pdf"].not_installed == {"pdf-magic": 2, "pfd": 1}
    assert rows["docx"].not_installed == {}
    assert trig.columns == ["pdf", "docx", "(not installed)", "(none)"]  # no made-up name is a column
    from omk.records.triggering import Triggering
    from omk.report.triggering import junit_properties, notes, routing_rows

    assert Triggering.read(json.loads(json.dumps(trig.to_json())), "report.json", "triggering") == trig
    assert "pdf: called a skill that is not installed: pdf-magic ×2, pfd" in notes(trig)
    assert routing_rows(trig)[1][0] == ["pdf (4)", "1", "1", "3", "1"]
    assert routing_rows(trig, "zh")[0][3] == "（未安装）"
    data = report_with_triggering()
    data["triggering"] = trig.to_json()
    props = dict(junit_properties(ReportDocument.from_dict(data)))
    assert props["routing:pdf:not_installed"] == "pdf-magic=2,pfd=1"
    assert "routing:docx:not_installed" not in props
    from omk.report.triggering import html_section

    page = html_section(ReportDocument.from_dict(data), "en")
    assert '<td class="num route-missing">3</td>' in page
    assert "called a skill that is not installed: pdf-magic ×2, pfd" in page
    unknown = triggering(cases, None)  # the run does not say what it installs: every name is a column, as before
    assert unknown is not None
    assert {r.expected: r for r in unknown.routing}["pdf"].fired["pdf-magic"] == 2


def test_one_skill_has_no_routing_matrix():
    trig = triggering([c for c in CASES if c.skill == "pdf"], ("pdf",))
    assert trig is not None
    assert trig.routing == ()


def test_the_paired_change_is_mcnemars_exact_test():
    rng = random.Random(7)
    control, treatment = [], []
    for i in range(40):
        before = rng.random() < 0.4
        after = rng.random() < 0.8 if not before else rng.random() < 0.95
        control.append(case("pdf", True, before, f"s{i}"))
        treatment.append(case("pdf", True, after, f"s{i}"))
    treatment.append(case("pdf", True, True, "only-in-treatment"))  # unpaired: left out
    [change] = trigger_changes("v2", control, treatment)
    lost = sum(1 for c, t in zip(control, treatment, strict=False) if c.fired and not t.fired)
    gained = sum(1 for c, t in zip(control, treatment, strict=False) if t.fired and not c.fired)
    assert (change.n, change.lost, change.gained, change.rate) == (40, lost, gained, "recall")
    assert change.p_value == pytest.approx(binomtest(lost, lost + gained, 0.5).pvalue)
    assert change.change == pytest.approx((change.treatment_fired - change.control_fired) / 40)


def skill_check(value: str, metric: int, negate: bool = False) -> AssertionResult:
    passed = (metric >= 1) != negate
    return AssertionResult(type="skill_used", layer=Layer.BEHAVIOR, status=Status.PASSED if passed else Status.FAILED, weight=1.0, negate=negate, metric=metric, value=value)


def test_cases_come_from_the_results_skill_used_checks_and_their_trace():
    trace = Trace(tool_calls=(ToolCall("Skill", {"skill": "pdf"}, "ok"), ToolCall("Skill", {"skill": "docx"}, "ok")))
    checks = (skill_check("pdf", 1), skill_check("xlsx", 0, negate=True))
    result = SampleResult.start(Sample(sample_id="s1", prompt="p"), "p", trace=trace, assertions=checks)
    assert trigger_cases(result) == (
        TriggerCase("pdf", True, True, "s1", 0, None, ("docx",)),
        TriggerCase("xlsx", False, False, "s1", 0, None, ("pdf", "docx")),
    )
    result = msgspec.structs.replace(result, status="error")
    from omk.scoring.digest import Digest

    assert Digest.of(result).triggers == ()  # an errored result says nothing about the description


def report_with_triggering() -> dict:
    from report_factory import make_report

    data = make_report()
    trig = triggering(CASES, ("pdf", "docx"))
    assert trig is not None
    data["triggering"] = trig.to_json()
    return data


def test_the_block_reads_back_and_every_text_format_shows_it():
    data = json.loads(json.dumps(report_with_triggering()))
    doc = ReportDocument.from_dict(data)
    assert doc.triggering is not None
    assert doc.triggering.to_json() == data["triggering"]
    md = render_markdown(doc)
    assert "### Triggering" in md
    assert "| pdf | 2/3 67% [21%, 94%] | 1/2 50% [9%, 91%] |" in md
    assert "#### Routing: which skill fired" in md
    assert "| docx (2) | 1 | 1 | · |" in md
    assert "docx: no negative controls" in md
    xml = render_junit(doc)
    xml_text = xml if isinstance(xml, str) else xml.decode()
    assert 'name="trigger:pdf:recall" value="2/3 67% [21%, 94%]"' in xml_text
    assert 'name="trigger:pdf:false_triggered" value="near-2"' in xml_text
    assert 'name="routing:docx" value="pdf=1,docx=1"' in xml_text
    from rich.console import Console

    from omk.report.terminal import print_summary

    console = Console(record=True, width=120)
    print_summary(doc, console)
    text = console.export_text()
    assert "Triggering (Wilson interval 95%)" in text
    assert "Routing: which skill fired" in text
    assert "near-2" in text
    zh = Console(record=True, width=120)
    print_summary(doc, zh, lang="zh")
    assert "技能触发" in zh.export_text()


def test_a_report_with_a_hand_edited_block_is_one_clear_error():
    from omk.core.errors import InputError

    data = report_with_triggering()
    data["triggering"]["skills"][0]["recall"]["k"] = "two"
    with pytest.raises(InputError, match=r"triggering.skills\[0\].recall.k: expected an integer"):
        ReportDocument.from_dict(data, "report.json")


def test_the_html_report_shows_it_in_a_browser(browser, tmp_path):
    from cdp_pipe import Page

    from omk.report.html_report import write_html

    path = write_html(tmp_path, report_with_triggering())
    page = Page(browser)
    page.goto(path.as_uri())
    rows = page.js("Array.from(document.querySelectorAll('#triggering table.trigger-skills tbody tr')).map(r => r.cells[0].textContent + '|' + r.cells[1].textContent)")
    assert rows == ["docx|1/2 50% [9%, 91%]", "pdf|2/3 67% [21%, 94%]"]
    matrix = page.js("Array.from(document.querySelectorAll('#triggering table.routing tr')).map(r => Array.from(r.cells).map(c => c.textContent).join(','))")
    assert matrix == ["expected \\ fired,pdf,docx,(none)", "pdf (3),2,·,1", "docx (2),1,1,·"]
    assert page.js("document.getElementById('triggering').offsetHeight") > 0  # laid out, not hidden
    assert page.errors() == []


def test_an_experiment_shows_each_treatments_trigger_rate_change_in_every_format(tmp_path):

    for name in ("pdf", "docx"):
        (tmp_path / "sk" / name).mkdir(parents=True)
        (tmp_path / "sk" / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name}\n---\n", encoding="utf-8")
    (tmp_path / "omk.yaml").write_text(
        "target: replay:r.jsonl\nvariants:\n  - {name: without, role: control, baseline: true}\n"
        "  - {name: with, role: treatment, skills: sk}\n",
        encoding="utf-8",
    )
    (tmp_path / "s.yaml").write_text(
        "samples:\n  - sample_id: a\n    prompt: p\n    assertions:\n      - {type: skill_used, value: pdf}\n"
        "      - {type: skill_used, value: docx, not: true}\n",
        encoding="utf-8",
    )
    trace = {"tool_calls": [{"tool": "Skill", "input": {"skill": "pdf"}}]}
    (tmp_path / "r.jsonl").write_text(json.dumps({"sample_id": "a", "output": "x", "trace": trace}) + "\n", encoding="utf-8")
    proc = run_omk(
        "eval", "s.yaml", "--no-judge", "--out", "run", "--format", "json,md,junit,html",
        cwd=tmp_path, drop=(), columns=None,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    assert "Trigger rates, treatment against control" in proc.stdout
    assert "Triggering · with" in proc.stdout
    report = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    changes = {(c["skill"], c["rate"]): c for c in report["experiment"]["triggering"]}
    # the baseline installs nothing: pdf cannot fire there, whatever the recorded trace says
    assert (changes[("pdf", "recall")]["control_fired"], changes[("pdf", "recall")]["treatment_fired"]) == (0, 1)
    assert changes[("docx", "false_trigger_rate")]["treatment_fired"] == 0
    run = tmp_path / "run"
    assert "| with | pdf | recall | 0/1 0% | 1/1 100% | +100% | 0 / 1 | 1 |" in (run / "summary.md").read_text(encoding="utf-8")
    assert 'name="trigger_change:with:pdf:recall" value="0/1 -&gt; 1/1 p=1"' in (run / "junit.xml").read_text(encoding="utf-8")
    assert 'class="trigger-changes"' in (run / "report.html").read_text(encoding="utf-8")
    zh = run_omk(
        "eval", "s.yaml", "--no-judge", "--out", "zh", "--format", "md", "--lang", "zh",
        cwd=tmp_path, drop=(), columns=None,
    )  # fmt: skip
    assert "触发率：实验组对比对照组" in zh.stdout and "技能触发 · with" in zh.stdout, zh.stdout + zh.stderr
    assert "### 触发率：实验组对比对照组" in (tmp_path / "zh" / "summary.md").read_text(encoding="utf-8")
