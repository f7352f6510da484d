"""The summary's intervals in every report format, from a real run: report.json (and read back),
the terminal, JUnit, Markdown, and the HTML page in a headless Chromium; a figure over one
sample says it has no interval."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_support import run_omk

from omk.records.document import read_document

ROOT = Path(__file__).resolve().parents[1]
INTERVAL = r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]"

# A judge whose every call is a fresh draw: its call-to-call noise is what the split measures.
JUDGE = """\
import json, random, sys
json.loads(sys.stdin.readline())
reply = {"reasoning": "checked", "score": random.choice([2, 3, 4, 5]), "reason": "ok"}
print(json.dumps({"output": json.dumps(reply), "cost_usd": 0.0001}))
"""


def _samples(tmp: Path, n: int) -> Path:
    lines, outputs = [], []
    for i in range(n):
        category = "billing" if i % 2 else "support"
        lines.append(f"- sample_id: s{i}\n  prompt: hi {i}\n  category: {category}\n  rubric: greets the user\n"
                     f"  assertions: [{{type: contains, value: hi}}]")  # fmt: skip
        outputs.append(json.dumps({"sample_id": f"s{i}", "output": "hi there" if i % 3 else "hello"}))
    (tmp / "out.jsonl").write_text("\n".join(outputs) + "\n", encoding="utf-8")
    path = tmp / "samples.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _omk(*args: str) -> subprocess.CompletedProcess[str]:
    return run_omk(*args, cwd=ROOT, columns=200)


def _run(tmp: Path, n: int, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    (tmp / "judge.py").write_text(JUDGE, encoding="utf-8")
    samples = _samples(tmp, n)
    out = tmp / "run"
    judge = f"cmd:{sys.executable} {tmp / 'judge.py'}"
    proc = _omk("eval", str(samples), "--target", f"replay:{tmp / 'out.jsonl'}", "--judge", judge, "--out", str(out), *extra)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    rendered = _omk("report", str(out), "--format", "md,html,junit")
    assert rendered.returncode == 0, rendered.stderr
    return proc, out


@pytest.fixture(scope="module")
def repeated(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    return _run(tmp_path_factory.mktemp("intervals"), 8, "--repeat", "2", "--judge-repeat", "3")


def test_report_json_has_an_interval_beside_every_mean_and_reads_back(repeated):
    _, out = repeated
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))["summary"]
    assert isinstance(summary["scores"]["composite"], float)  # the mean keeps its type
    for layer in ("fact", "judge", "composite"):
        ci = summary["scores_ci"][layer]
        assert ci["low"] <= summary["scores"][layer] <= ci["high"]
        assert ci["level"] == 0.95
    assert summary["scores_ci"]["behavior"] is None  # no behavior layer, no mean, no interval
    assert summary["pass_rate_ci"]["method"] == "wilson"
    for c in summary["categories"]:
        assert c["composite_ci"]["low"] <= c["composite"] <= c["composite_ci"]["high"]
        assert c["pass_rate_ci"]["low"] <= c["pass_rate"] <= c["pass_rate_ci"]["high"]
    variance = summary["variance"]
    assert (variance["samples"], variance["repeats"], variance["judge_calls"]) == (8, 2, 3)
    assert variance["components"]["judge"] > 0
    assert set(variance["shares"]) == {"sample", "run", "judge"}
    assert variance["advice"] in ("samples", "repeats", "judge_calls")
    assert variance["per_dollar"] is False
    assert variance["cost_per_call"]["target"] is None  # replay outputs cost nothing known
    document = read_document(out)
    assert document.summary.scores_ci is not None
    assert document.summary.variance is not None
    assert document.summary.variance.judge_calls == 3


def test_terminal_markdown_and_junit_show_the_intervals(repeated):
    proc, out = repeated
    assert re.search(rf"composite {INTERVAL} \(fact {INTERVAL}, behavior —, judge {INTERVAL}\)", proc.stdout), proc.stdout
    assert re.search(r"pass rate \d+% \[\d+%, \d+%\] \(Wilson, 95%\)", proc.stdout)
    assert "spread of the composite: samples differ" in proc.stdout
    assert "judge noise" in proc.stdout
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert re.search(rf"\| {INTERVAL} \| — \| {INTERVAL} \| {INTERVAL} \|", md)  # fact, behavior, judge, composite
    assert re.search(rf"\| support \| 8 \| \d \| \d \| 0 \| {INTERVAL} \| \d+% \[", md)  # a category: 4 samples × 2 runs
    props = {p.get("name"): p.get("value") for p in ET.parse(out / "junit.xml").iter("property")}
    low, high = (float(x) for x in props["composite_ci"].split(","))
    assert low <= float(props["composite"]) <= high
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))["summary"]
    for c in summary["categories"]:  # each category's composite interval too
        assert props[f"category_ci:{c['category']}"] == f"{c['composite_ci']['low']},{c['composite_ci']['high']}"


def test_the_html_page_shows_the_intervals_in_a_browser(repeated, browser):
    from cdp_pipe import Page

    _, out = repeated
    page = Page(browser)
    page.goto((out / "report.html").as_uri())
    card = page.js("document.querySelector('.card[data-layer=composite] .ci').innerText")
    assert re.fullmatch(r"95% \[\d\.\d\d, \d\.\d\d\]", card), card
    assert page.js("document.querySelector('.card[data-layer=composite] .ci').getBoundingClientRect().height") > 0
    lines = page.js("Array.from(document.querySelectorAll('p.intervals')).map(p => p.innerText)")
    assert lines[0].startswith("pass rate ")
    assert "Wilson" in lines[0]
    assert lines[1].startswith("spread of the composite")
    cells = page.js("Array.from(document.querySelectorAll('table.categories tbody tr')).map(r => r.cells[5].innerText)")
    assert len(cells) == 2 and all(re.fullmatch(INTERVAL, c) for c in cells), cells
    assert page.errors() == []


def test_one_sample_says_it_has_no_interval(tmp_path):
    proc, out = _run(tmp_path, 1)
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))["summary"]
    assert summary["scores"]["composite"] is not None
    assert summary["scores_ci"]["composite"] is None
    assert summary["pass_rate_ci"] is None
    assert "variance" not in summary
    assert re.search(r"composite \d\.\d\d \(1 sample, no interval\)", proc.stdout), proc.stdout
    assert "(1 sample, no interval)" in (out / "summary.md").read_text(encoding="utf-8")
    assert "(1 sample, no interval)" in (out / "report.html").read_text(encoding="utf-8")
