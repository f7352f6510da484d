"""The lines a run prints around its table, for a plain run (omk/cli/eval_cmd.py) and an
experiment (omk/cli/experiment_cmd.py) alike: loading's warnings, a resume's dropped lines, the
budget's stop and the command that continues the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omk.cli.console import say
from omk.core.errors import Problem
from omk.engine import Evaluation


def continue_command(evaluations: list[Evaluation], out_dir: Path | None = None) -> str:
    """The command, complete and quoted, that continues this run (or an experiment of these
    variants) from its folder."""
    from omk.runner.resume import resume_command

    first = evaluations[0]
    targets = [e.settings.target for e in evaluations]
    return resume_command(out_dir or first.out_dir or "", targets, list(first.settings.judge), first.samples)


def print_budget_stop(budget: Any, command: str | None) -> None:
    """The budget was reached: what was spent, what was left, how to go on (exit code 3)."""
    say(
        f"budget reached: ${budget.spent_usd:.4f} spent of ${budget.limit_usd:.4f}; "
        f"{len(budget.not_run)} run(s) not started (report.json budget.not_run)",
        err=True,
    )
    if command is not None:
        say(f"continue it with: {command} --budget-usd {budget.limit_usd:g}", err=True)
        say("  (--budget-usd sets the spending limit of the rest; leave it out for none)", err=True)


def print_warnings(warnings: list[Problem]) -> None:
    """What loading ignored, on stderr, one `FILE:LINE: … ; ignored` line each, before the run."""
    if not warnings:
        return
    from omk.io.textsafe import for_terminal
    from omk.report.i18n import counted

    head = f"omk: {counted(len(warnings), 'warning', 'warnings')} in the samples (--strict makes them errors):"
    say("\n".join([head, *(f"  {for_terminal(w.render())}" for w in warnings)]), err=True)


def print_skipped(skipped: list[str]) -> None:
    """A resumed run's results.jsonl lines that could not be used, each with its line and field."""
    if not skipped:
        return
    from omk.io.textsafe import for_terminal
    from omk.report.i18n import counted

    head = f"omk: {counted(len(skipped), 'line', 'lines')} of results.jsonl dropped; their samples run again:"
    say("\n".join([head, *(f"  {for_terminal(line)}" for line in skipped)]), err=True)


def shown_path(path: Path | None) -> str:
    """A file the run wrote as the user can type it: relative to the current folder when it is
    under it (`.omk/runs/ID/report.json`), else in full."""
    if path is None:
        return "None"
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)
