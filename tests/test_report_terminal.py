"""The terminal summary of a real run, rendered at a fixed width: one line per sample and per turn."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from cli_support import run_omk
from rich.console import Console

from omk.report.terminal import print_summary

ROOT = Path(__file__).resolve().parent.parent
CONTINUATION = re.compile(r"^│[^│]*│\s+│")  # a wrapped row: its status cell is blank


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("run")
    proc = run_omk(
        "eval", str(ROOT / "samples" / "eval-samples.yaml"), "--target", f"replay:{ROOT / 'samples' / 'responses.jsonl'}", "--out", str(out), "--quiet",
        drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def _render(report: dict, width: int) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    print_summary(report, console)
    return console.file.getvalue().splitlines()


@pytest.mark.parametrize("width", [100, 140])
def test_each_turn_of_a_conversation_is_one_line_chinese_included(report, width):
    lines = _render(report, width)
    turns = [line for line in lines if "↳" in line]
    assert len(turns) == sum(len(r.get("turns") or []) for r in report["results"]) == 5
    assert not [line for line in lines if CONTINUATION.match(line)]  # nothing wrapped
    zh = [line for line in turns if "耳机" in line or "进水" in line]
    assert len(zh) == 2
    assert all(line.count("│") == 8 for line in zh)
    assert all(len(line) <= width for line in lines)


def test_a_narrow_terminal_cuts_turn_labels_instead_of_wrapping_them(report):
    lines = _render(report, 70)
    turns = [line for line in lines if "↳" in line]
    assert len(turns) == 5
    assert all("…" in line for line in turns)
    assert all(line.count("│") == 8 for line in turns)


def test_a_sample_that_failed_in_several_runs_is_one_block_with_its_runs_counted():
    """Under --repeat a failing sample is said once, with how many of its runs failed and each
    distinct reason once (not one block per run, the same reasons printed again)."""
    from report_corpus import CORPUS, render

    for lang, counted in (("en", "in 2 of 2 runs"), ("zh", "2 次中有 2 次")):
        text = render(CORPUS / "repeats")[f"terminal.{lang}.txt"]
        failures = text.split("Failures" if lang == "en" else "失败", 1)[-1]
        for sample in ("cs-order-status-en", "cs-canned-greeting"):
            assert failures.count(f"  {sample} · ") == 1, (lang, sample)  # one block's heading
            assert f"  {sample} · {counted}" in failures, (lang, sample)
        assert failures.count("latency_max 8000: latency_ms 9200 > max 8000") <= 1
