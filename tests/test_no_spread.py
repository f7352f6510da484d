"""A figure without variance gets its own wording: when every sample scored the same on both
arms there is no detectable size and no sample count to give, and every place that would show
one (the verdict's advice in the terminal, Markdown, HTML and JSON; the measures table; `omk
power`'s lines and JSON) says so instead."""

from __future__ import annotations

from experiment_support import experiment

from omk.cli.power_cmd import power_lines
from omk.records.experiment_block import ExperimentBlock
from omk.report.experiment_tables import measure_rows
from omk.stats import Level
from omk.stats.paired import NO_SPREAD
from omk.stats.power import PowerFigures, SpreadParts


def test_an_ablation_whose_scores_never_vary_says_there_is_no_spread() -> None:
    analysis = experiment([4.0] * 6, [4.0] * 6)
    v = analysis.verdict
    assert v.level is Level.UNDERPOWERED
    assert NO_SPREAD in v.recommendation and "would detect" not in v.recommendation, v.recommendation
    block = ExperimentBlock.of(analysis)
    assert measure_rows(block.comparisons[0])[0].mde == "exact"
    assert NO_SPREAD in block.to_json()["verdict"]["recommendation"]


def test_ties_over_enough_samples_say_there_is_no_spread_not_a_size_of_zero() -> None:
    v = experiment([4.0] * 30, [4.0] * 30).verdict
    assert v.level is Level.NOISE
    assert NO_SPREAD in v.recommendation and "0.00 or more" not in v.recommendation, v.recommendation


def test_power_of_a_run_that_never_varies_says_so() -> None:
    figures = PowerFigures("t", "c", SpreadParts(samples=6, repeats=1, between_var=0.0, within_var=None), effect=0.1, alpha=0.05, power=0.8)
    data = figures.to_json()
    assert data["note"] == NO_SPREAD
    assert data["detectable"] is None
    assert all(n["samples"] is None for n in data["samples_needed"])
    text = "\n".join(power_lines(data))
    assert NO_SPREAD in text
    assert "0.000 or more" not in text
    assert "needs" not in text
