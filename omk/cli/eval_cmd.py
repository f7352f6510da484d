"""`omk eval`: the command line over the engine (omk.engine) — parse, run, print, exit code."""

from __future__ import annotations

import argparse
import asyncio
import gc
from pathlib import Path
from typing import Any

from omk.cli.console import say
from omk.cli.main import EXIT_GATE, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK
from omk.cli.run_lines import continue_command, print_budget_stop, print_skipped, print_warnings, shown_path
from omk.engine import EvalOptions, Evaluation, Report
from omk.records import SampleResult


def options_from(args: argparse.Namespace, target: str | None) -> EvalOptions:
    options = EvalOptions.from_mapping(vars(args))
    options.target = target
    return options


def run_eval(args: argparse.Namespace) -> int:
    if not getattr(args, "dry_run", False):
        return _run_eval(args, None)
    from omk.io.process import no_programs

    with no_programs() as not_run:  # a dry run starts no program at all: not the CLI, a hook or a server
        return _run_eval(args, not_run)


def _run_eval(args: argparse.Namespace, not_run: list[str] | None) -> int:
    if args.gold:  # a bad labels file is bad input: said before anything runs
        from omk.gold import read_labels_file

        for path in args.gold:
            read_labels_file(Path(path))
    targets = args.target if isinstance(args.target, list) else [args.target] if args.target else []
    # --target A --target B: an experiment whose variants differ by target (A the control)
    options = options_from(args, targets[0] if len(targets) == 1 else None)
    from omk.engine.run_kind import prepare_run

    gc.disable()  # loading makes the samples, which all live on: the collector would only rescan them
    try:
        run = prepare_run(options, targets=targets if len(targets) > 1 else None)  # the engine decides what kind of run it is
        # They live as long as the run: set aside before the collector runs again, so that it
        # never walks them (enabled first, its next pass would walk every object the load made).
        gc.freeze()
    finally:
        gc.enable()
    if not isinstance(run, Evaluation):
        from omk.cli.experiment_cmd import run_experiment_cli

        if options.dry_run:
            try:
                return print_estimate(run.evaluations, not_run or [], args.lang or "en")
            finally:
                run.remove_scratch()  # an ablation's temporary copies of the skill
        return run_experiment_cli(args, run)
    evaluation = run
    if options.dry_run:
        print_warnings(evaluation.warnings)
        return print_estimate([evaluation], not_run or [], args.lang or "en")
    print_warnings(evaluation.warnings)
    print_skipped(evaluation.log.skipped)
    report = execute(evaluation, quiet=args.quiet)
    if report is None:
        return EXIT_INTERRUPTED
    show(report, evaluation, quiet=args.quiet)
    if report.budget is not None and report.budget.stopped:
        print_budget_stop(report.budget, continue_command([evaluation]) if evaluation.out_dir else None)
        return EXIT_INCOMPLETE
    return EXIT_OK if report.passed else EXIT_GATE


def print_estimate(evaluations: list[Evaluation], not_run: list[str], lang: str = "en") -> int:
    """`--dry-run`: the plan and what it would cost; no call was made, no program started, and
    `not_run` says which checks that left undone."""
    from omk.engine.estimate import estimate
    from omk.io.process import keys_missing
    from omk.report.i18n import key_text, not_run_text, t

    plan = estimate(evaluations)
    lines = estimate_lines(plan, lang)
    warning = t("warning: {message}; a run stops here (a dry run sends nothing, so it needs no key)", lang)
    lines += ["  " + warning.format(message=key_text(message, lang)) for message in keys_missing()]
    if not_run:
        lines.append("  " + t("not checked without running it: {what}", lang).format(what="; ".join(not_run_text(w, lang) for w in not_run)))
    say("\n".join(lines))
    return EXIT_OK


def _total(plan: Any, lang: str) -> str:
    """The sum, said as a floor when some calls have no price: `$0.0000` alone would read as free."""
    from omk.report.i18n import t

    if not (plan.unpriced or plan.self_priced):
        return f"${plan.cost_usd:.4f}"
    if plan.cost_usd == 0:
        return t("unknown (no call of this run has a known price; see below)", lang)
    return t("at least ${cost} (the calls below are not counted)", lang).format(cost=f"{plan.cost_usd:.4f}")


def estimate_lines(plan: Any, lang: str = "en") -> list[str]:
    from omk.report.i18n import t

    def money(value: float | None) -> str:
        return t("no known price", lang) if value is None else f"${value:.4f}"

    variants = t(" over {n} variants", lang).format(n=plan.variants) if plan.variants > 1 else ""
    lines = [t("dry run: nothing was called and no program started; {n} sample run(s) to do", lang).format(n=plan.jobs) + variants]
    for m in plan.lines:
        said = t("{calls} call(s), ~{input} prompt + ~{output} output tokens", lang)
        counts = said.format(calls=m.calls, input=m.input_tokens, output=m.output_tokens)
        lines.append(f"  {t(m.role, lang)} {m.name}: {counts}{'，' if lang == 'zh' else ', '}{money(m.cost_usd)}")
    lines.append(t("estimated cost: {total}", lang).format(total=_total(plan, lang)))
    if plan.unpriced:
        settings = " / ".join(plan.unpriced_settings)
        example = plan.unpriced_settings[0].split(" / ")[0].removesuffix(".price")
        said = t("not counted (no known price; set {settings} in omk.yaml, USD per 1M tokens, e.g. `{example}`)", lang)
        shown = said.format(settings=settings, example=f"{example}: {{price: {{input: 3, output: 15}}}}")
        lines.append(f"  {shown}: {', '.join(plan.unpriced)}")
    if plan.self_priced:
        said = t("not counted (no price before it runs: the run counts the cost_usd the target reports)", lang)
        lines.append(f"  {said}: {', '.join(plan.self_priced)}")
    said = t("prompt tokens counted with omk's word tokenizer; output tokens from the cache for {cached} target call(s), {n} per call otherwise", lang)
    lines.append("  " + said.format(cached=plan.outputs_from_cache, n=plan.default_output_tokens))
    if plan.urls:
        lines.append("  " + t("{n} URL(s) in prompts not fetched: their content is not counted", lang).format(n=plan.urls))
    return lines


def execute(evaluation: Evaluation, *, quiet: bool) -> Report | None:
    """Run with a progress line; None when interrupted (what finished is kept for --resume)."""
    from omk.runner.progress import make_progress

    plan, done = len(evaluation.plan), evaluation.log.digests
    errors_before = sum(1 for r in done.values() if r.status == "error")
    progress = make_progress(plan, len(done), errors_before, quiet=quiet)

    def on_result(result: SampleResult) -> None:
        progress.advance(result)

    try:
        with progress:
            asyncio.run(evaluation.execute(on_result))
    except KeyboardInterrupt:
        from omk.report.i18n import t

        lang = evaluation.settings.lang
        say(t("interrupted: the partial run is kept in {path}", lang).format(path=evaluation.out_dir), err=True)
        say(t("resume it with: {command}", lang).format(command=continue_command([evaluation])), err=True)
        return None
    return evaluation.finish()


def show(report: Report, evaluation: Evaluation, *, quiet: bool) -> None:
    from omk.report.i18n import counted, t

    lang = evaluation.settings.lang
    report_path = evaluation.out_dir / "report.json" if evaluation.out_dir else None
    summary = report.summary
    also = [shown_path(p) for p in report.files if p != report_path]  # report.html, junit.xml, report.md
    if quiet:  # one plain line, without loading rich

        verdict = "gate passed" if summary.gate_passed else "gate failed"
        runs = f" runs ({counted(summary.total // summary.repeat, 'sample', 'samples')} × {summary.repeat})" if summary.repeat > 1 else ""
        say(f"{t(verdict, lang)}: {summary.passed}/{summary.total}{runs} · {', '.join([shown_path(report_path), *also])}")
        return
    from omk.cli.console import make_console
    from omk.report.terminal import print_summary

    console = make_console()
    print_summary(_document(report, report_path), console, lang, shown_path(report_path), also)


def _document(report: Report, report_path: Path | None) -> Any:
    """The report as the formats read it: from the report.json just written (one result at a time)."""
    from omk.records.document import ReportDocument, read_document

    return read_document(report_path) if report_path is not None else ReportDocument.from_dict(report.to_dict())
