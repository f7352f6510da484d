"""The outcome of an evaluation as typed objects: `Report` and its `Summary`.

`Report.to_dict()` is exactly what `report.json` holds (docs/report-format.md); each result is the
run's `SampleResult` (omk.samples.model), so a caller reads `result.passed`, `result.scores.fact` or
`result.assertions[0].message` instead of digging through dictionaries. A run with a folder reads
its results back from `results.jsonl` as they are asked for (`report.results` is a sequence that
holds none of them), so a large run's report costs no memory until a caller walks it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omk.io.jsontext import dumps
from omk.records import SampleResult
from omk.records.document import FORMAT, LayerMeans, RunTarget, Summary
from omk.version import __version__

if TYPE_CHECKING:  # the feature blocks' records load only when a run makes one
    from omk.records.budget import BudgetBlock
    from omk.records.gold import GoldCheck
    from omk.records.judge_settings import JudgeSettings
    from omk.records.repeats import Repeats
    from omk.records.shard import ShardInfo
    from omk.records.triggering import Triggering

__all__ = ["LayerMeans", "Report", "Summary"]


@dataclass(slots=True)
class Report:
    run_id: str
    started_at: str
    finished_at: str
    samples_files: list[str]
    target: RunTarget  # what produced the outputs: kind, spec and what the kind adds
    judge: JudgeSettings | None  # the judge's models and settings; None when no judge ran
    summary: Summary
    results: Sequence[SampleResult]  # in plan order; read from the run's results file when iterated
    repeats: Repeats | None = None  # spread per sample under --repeat N (N > 1)
    out_dir: Path | None = None  # the run folder, when the run wrote one
    lang: str = "en"
    omk_version: str = __version__
    warnings: list[str] = field(default_factory=list)  # what loading ignored, `FILE:LINE: … ; ignored`
    triggering: Triggering | None = None  # whether each skill fired when it should (`skill_used`)
    shard: ShardInfo | None = None  # one shard of a split run, or a merge of shards
    budget: BudgetBlock | None = None  # the spending limit of this invocation, its spend and what it left undone
    gold: GoldCheck | None = None  # the judge checked against people's labels (omk.gold)
    files: list[Path] = field(default_factory=list)  # what the run wrote into out_dir: report.json first

    @property
    def incomplete(self) -> bool:
        """Whether the budget stopped the run before every sample ran (exit code 3)."""
        return self.budget is not None and self.budget.stopped

    @property
    def passed(self) -> bool:
        """Whether every gate passed: what `omk eval` turns into exit code 0."""
        return self.summary.gate_passed

    def __iter__(self) -> Iterator[SampleResult]:
        return iter(self.results)

    def result(self, sample_id: str, repeat: int = 0) -> SampleResult:
        if (get := getattr(self.results, "get", None)) is not None:  # by its place in the results file
            if isinstance(found := get((sample_id, repeat)), SampleResult):
                return found
            raise KeyError(f"no result for sample {sample_id!r} (repeat {repeat})")
        for r in self.results:
            if r.sample_id == sample_id and r.repeat == repeat:
                return r
        raise KeyError(f"no result for sample {sample_id!r} (repeat {repeat})")

    def failures(self) -> list[SampleResult]:
        """The results that did not pass: failed gates and errored samples, in sample order."""
        return [r for r in self.results if not r.passed]

    def to_dict(self) -> dict[str, Any]:
        """The whole report.json as a dictionary (every result in memory)."""
        texts = getattr(self.results, "texts", None)
        results = [json.loads(t) for t in texts()] if texts else [r.to_json() for r in self.results]
        return {**self.header(), "results": results}

    def header(self) -> dict[str, Any]:
        """report.json with its results as `ResultTexts` (omk/report/json_report.py): read one at a
        time while the report is written."""
        data: dict[str, Any] = {
            "format": FORMAT,
            "run_id": self.run_id,
            "omk_version": self.omk_version,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "samples_files": list(self.samples_files),
            "target": self.target.to_json(),
            "judge": self.judge.to_json() if self.judge is not None else None,
            "summary": self.summary.to_json(),
            "results": self.results if hasattr(self.results, "texts") else _Texts(self.results),
            "repeats": self.repeats.to_json() if self.repeats is not None else None,
        }
        if self.triggering is not None:
            data["triggering"] = self.triggering.to_json()
        if self.shard is not None:
            data["shard"] = self.shard.to_json()
        if self.budget is not None:
            data["budget"] = self.budget.to_json()
        if self.gold is not None:
            data["gold"] = self.gold.to_json()
        if self.warnings:
            data["warnings"] = list(self.warnings)
        return data

    def write(self, formats: Iterable[str] = ("json",), out_dir: str | Path | None = None, lang: str | None = None) -> list[Path]:
        """Write report.json and the other formats (json, junit, md, html); returns their paths."""
        from omk.report import write_formats

        folder = Path(out_dir) if out_dir is not None else self.out_dir
        if folder is None:
            raise ValueError("this report has no run folder: pass out_dir")
        return write_formats(folder, self.header(), list(formats), lang or self.lang)


class _Texts:
    """Results kept in memory, given as their JSON texts."""

    def __init__(self, results: Sequence[SampleResult]):
        self.results = results

    def __len__(self) -> int:
        return len(self.results)

    def texts(self) -> Iterator[str]:
        return (dumps(r.to_json()) for r in self.results)
