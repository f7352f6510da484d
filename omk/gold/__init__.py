"""Judges checked against people: labels (`gold:` in samples, or a labels file), the check
(Krippendorff's α, Cohen's κ, bias, disagreements; omk/records/gold.py) and the labels
template `omk gold init` writes. See docs/judge.md (gold labels)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from omk.core.errors import InputError, Problem
from omk.gold.check import CheckSettings, check
from omk.gold.init import template_lines
from omk.gold.labels import GoldLabel, group, labels_of_sample, read_labels_file
from omk.records import SampleResult
from omk.records.document import ReportDocument
from omk.records.gold import GoldCheck

__all__ = ["CheckSettings", "GoldLabel", "check", "check_run", "labels_of_results", "read_labels_file", "template_lines"]


def labels_of_results(results: Iterable[SampleResult], origin: str) -> list[GoldLabel]:
    """The labels the run's samples carried (`gold:`, copied into their first result)."""
    labels: list[GoldLabel] = []
    problems: list[Problem] = []
    for r in results:
        if r.repeat != 0 or not r.gold:
            continue
        found, bad = labels_of_sample(r.sample_id, r.gold if len(r.gold) > 1 else r.gold[0])
        labels += found
        problems += [Problem(origin, None, f"results ({r.sample_id})", f, m) for f, m in bad]
    if problems:
        raise InputError(problems)
    return labels


def check_results(
    results: Sequence[SampleResult], judges: Sequence[str], files: Sequence[Path], settings: CheckSettings, origin: str
) -> GoldCheck | None:
    """The check of a run's results against its samples' `gold:` and the labels `files`; None
    when there is no label at all. `results` is walked twice (the labels, then the check), one
    result at a time: a run's lazily read results (omk/records/rows.py) are never all held."""
    labels = labels_of_results(results, origin)
    for path in files:
        labels += read_labels_file(path)
    if not labels:
        return None
    return check(results, group(labels), judges, settings)


def check_run(document: ReportDocument, files: Sequence[Path], settings: CheckSettings, origin: str) -> GoldCheck | None:
    return check_results(document.results, list(document.judge_models or ()), files, settings, origin)
