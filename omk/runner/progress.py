"""The live progress line: done/total, errors, elapsed time and money spent this run.

Shown only when stdout is a terminal and `--quiet` is off, so logs and CI output stay clean.
Cached results count as done and cost nothing this run.
"""

from __future__ import annotations

import sys
from typing import Any

from omk.records import SampleResult


class NoProgress:
    def __enter__(self) -> NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def advance(self, result: SampleResult) -> None:
        return None


class RunProgress(NoProgress):
    def __init__(self, total: int, done: int = 0, errors: int = 0, console: Any = None):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._errors = errors
        self._cost = 0.0
        self._progress = Progress(
            TextColumn("[bold]omk eval"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("· {task.fields[errors]} errors · ${task.fields[cost]:.4f}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._task = self._progress.add_task("run", total=total, completed=done, errors=errors, cost=0.0)

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def advance(self, result: SampleResult) -> None:
        if result.status == "error":
            self._errors += 1
        if not result.cached and result.trace.cost_usd is not None:
            self._cost += result.trace.cost_usd
        self._progress.update(self._task, advance=1, errors=self._errors, cost=self._cost)


def make_progress(total: int, done: int = 0, errors: int = 0, *, quiet: bool = False) -> NoProgress:
    if quiet or not sys.stdout.isatty():
        return NoProgress()
    return RunProgress(total, done, errors)
