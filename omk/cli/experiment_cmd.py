"""`omk eval` as an experiment (variants), `omk verdict RUN_DIR` and `omk diff RUN_A RUN_B`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omk.cli.console import say
from omk.cli.main import EXIT_GATE, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK
from omk.cli.run_lines import shown_path
from omk.records import SampleResult

if TYPE_CHECKING:  # the experiment engine and its statistics load only when a run is one
    from omk.engine.experiment import Experiment, ExperimentOutcome
    from omk.records.experiment_block import ExperimentBlock
    from omk.stats.diff import RunDiff


def run_experiment_cli(args: argparse.Namespace, experiment: Experiment) -> int:
    """Run every variant, interleaved, with one progress line; print the table and the verdict."""
    import asyncio

    from omk.cli.run_lines import print_skipped, print_warnings
    from omk.runner.progress import make_progress

    print_warnings(experiment.evaluations[0].warnings if experiment.evaluations else [])
    print_skipped([line for e in experiment.evaluations for line in e.log.skipped])
    jobs = len(experiment.schedule())
    total = sum(len(e.plan) for e in experiment.evaluations)
    progress = make_progress(total, total - jobs, 0, quiet=args.quiet)

    def on_result(_variant: str, result: SampleResult) -> None:
        progress.advance(result)

    try:
        with progress:
            asyncio.run(experiment.execute(on_result))
    except KeyboardInterrupt:
        say(f"interrupted: the partial experiment is kept in {experiment.out_dir}", err=True)
        say(f"resume it with: {_continue(experiment)}", err=True)
        return EXIT_INTERRUPTED
    outcome = experiment.finish()
    code = show_outcome(outcome, experiment.options.require, quiet=args.quiet, lang=experiment.options.lang or "en")
    stopped = [r.budget for r in outcome.reports.values() if r.budget is not None and r.budget.stopped]
    if stopped:
        from omk.cli.run_lines import print_budget_stop
        from omk.records.budget import BudgetBlock

        runs = tuple(n for b in stopped for n in b.not_run)
        print_budget_stop(BudgetBlock(stopped[0].limit_usd, stopped[0].spent_usd, runs), _continue(experiment))
        return EXIT_INCOMPLETE
    return code


def _continue(experiment: Any) -> str | None:
    """The command that continues the experiment from its folder, complete and quoted."""
    from omk.cli.run_lines import continue_command

    if experiment.out_dir is None or not experiment.evaluations:
        return None
    return continue_command(experiment.evaluations, experiment.out_dir)


def _print_triggering(outcome: ExperimentOutcome, console: Any, lang: str = "en") -> None:
    """Each variant's triggering report, then each treatment's paired change of the rates."""
    from omk.report.triggering import terminal_parts

    for name, report in outcome.reports.items():
        for part in terminal_parts(report.triggering, (), lang, label=name):
            console.print(part)
    for part in terminal_parts(None, list(outcome.block.triggering), lang):
        console.print(part)


def show_outcome(outcome: ExperimentOutcome, require: str | None, *, quiet: bool, lang: str = "en") -> int:
    from omk.report.i18n import t, verdict_line, verdict_text
    from omk.stats import evaluate_policy

    verdict = outcome.analysis.verdict
    if quiet:  # one plain line: the verdict and the files, as the user can type them
        say(f"{verdict_line(verdict.headline, lang)} · {', '.join(shown_path(p) for p in outcome.files)}")
    else:
        from omk.cli.console import make_console

        console = make_console()
        print_variants(outcome.block, console, lang)
        if outcome.block.ablation is not None:  # --ablate: what each part of the skill is worth
            from omk.report.ablation import print_table

            print_table(outcome.block.ablation, console, lang)
        if outcome.block.pairs:
            from omk.report.pairwise_terminal import print_pairwise

            print_pairwise(outcome.block.pairs, console, lang)
        _print_triggering(outcome, console, lang)
        _print_tail(outcome, console, lang)
    errored = {name: report.summary.errored for name, report in outcome.reports.items() if report.summary.errored}
    if errored:  # a sample whose target or judge failed is not evidence either way: the run needs attention
        counts = ", ".join(f"{name} {n}" for name, n in errored.items())
        say(t("errored samples ({counts}): exit 1 whatever the verdict; see each variant's report", lang).format(counts=counts), err=True)
    if require is None:
        return EXIT_GATE if errored else EXIT_OK
    policy = evaluate_policy(verdict, require)
    say(f"--require {require}: {t('met' if policy.passed else 'NOT met', lang)} — {verdict_text(policy.reason, lang)}", err=True)
    return EXIT_OK if policy.passed and not errored else EXIT_GATE


def _print_tail(outcome: ExperimentOutcome, console: Any, lang: str) -> None:
    """The judge against people, the verdict's lines, the shard and the files written."""
    from omk.report.gold import terminal_tables
    from omk.report.i18n import shard_label, t, verdict_line
    from omk.report.plain import plain

    for part in terminal_tables(outcome.report, lang):  # the judge against people (the control's outputs)
        console.print(part)
    for line in outcome.analysis.verdict.lines:  # a long line wraps between words at the terminal's width
        console.print(verdict_line(line, lang), markup=False, highlight=False)
    if outcome.report.shard is not None:
        console.print(shard_label(outcome.report.shard, lang), markup=False, highlight=False)
    if outcome.out_dir is not None:
        console.print(plain(f"{t('report', lang)}: {shown_path(outcome.out_dir / 'report.json')}"))
        if also := [shown_path(p) for p in outcome.files[1:]]:  # report.html, junit.xml, summary.md
            console.print(plain(f"{t('also written', lang)}: {', '.join(also)}"))


def _fmt(value: Any, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def print_variants(block: ExperimentBlock, console: Any, lang: str = "en") -> None:
    """The variants side by side: gate, scores and errors in the table; cost and latency below it."""
    from rich import box

    from omk.report.experiment_tables import cached_line, variant_score
    from omk.report.i18n import t
    from omk.report.plain import PlainTable as Table
    from omk.report.plain import plain

    table = Table(title=t("Variants", lang), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True, lang=lang)
    drop = {"judge": 1, "fact": 2, "behavior": 3}  # too narrow: the layers go first (the line below the table has them)
    for col in ("variant", "role", "passed", "composite", "fact", "behavior", "judge", "errored"):
        if col == "variant":
            table.add_column(t(col, lang), min_width=min(24, max(len(v.name) for v in block.variants)))
        else:
            justify = "left" if col == "role" else "right"
            table.add_column(t(col, lang), justify=justify, no_wrap=col != "composite", drop=drop.get(col))  # its interval wraps
    for v in block.variants:
        table.add_row(
            v.name,
            t(v.role or "", lang),
            plain(f"{v.passed}/{v.samples}"),
            variant_score(v, "composite", lang),  # with its 95% interval
            *(_fmt(v.scores.layer(k)) for k in ("fact", "behavior", "judge")),
            str(v.errored),
        )
    console.print(table)
    costs = " · ".join(f"{v.name} ${_fmt(v.cost_usd, 4)}, {_fmt(v.latency_ms, 0)} ms" for v in block.variants)
    for line in (*_interval_lines(block, lang), f"{t('cost, mean latency per sample', lang)}: {costs}"):
        console.print(line, markup=False, highlight=False)
    if cached := cached_line(block, lang):  # answers an earlier run's calls gave
        console.print(cached, markup=False, highlight=False, style="yellow")


def _interval_lines(block: ExperimentBlock, lang: str) -> list[str]:
    """Beneath the table (whose cells stay short): each variant's pass rate with its Wilson
    interval and each layer's mean with its 95% interval; none in a report from before intervals."""
    from omk.report import intervals
    from omk.report.experiment_tables import variant_score
    from omk.report.i18n import t

    shown = [v for v in block.variants if v.scores_ci is not None]
    if not shown:
        return []
    rates = " · ".join(f"{v.name} {intervals.rate(v.pass_rate, v.pass_rate_ci, True, lang)}" for v in shown)
    layers = " · ".join(
        f"{v.name} " + ", ".join(f"{t(k, lang)} {variant_score(v, k, lang)}" for k in ("fact", "behavior", "judge") if v.scores.layer(k) is not None)
        for v in shown
    )
    return [f"{t('pass rate', lang)} (Wilson, 95%): {rates}", f"{t('layers, 95% intervals', lang)}: {layers}"]


def _experiment_of(run_dir: Path) -> ExperimentBlock:
    """The run's experiment block, typed (`to_json()` for `--json`)."""
    from omk.core.errors import InputError, Problem
    from omk.records.document import read_document

    document = read_document(run_dir)  # the block only: its results are not read
    if document.experiment is None:
        where = run_dir / "report.json" if run_dir.is_dir() else run_dir
        raise InputError([Problem(str(where), None, "", "experiment", "this run is not an experiment (no experiment block)")])
    return document.experiment


def run_verdict(args: argparse.Namespace) -> int:
    from omk.report.i18n import t, verdict_line, verdict_text
    from omk.stats import PolicyResult, evaluate_policy

    lang = getattr(args, "lang", None) or "en"

    experiment = _experiment_of(Path(args.run_dir))
    verdict = experiment.verdict
    if args.json:
        say(json.dumps(dict(experiment.to_json()), ensure_ascii=False, indent=2))
    else:
        for line in verdict.lines or (verdict.headline,):
            say(verdict_line(line, lang))
    require = args.require or (experiment.require.policy if experiment.require else None)  # the run's own, unless given another
    if not require:
        return EXIT_OK
    policy: PolicyResult = evaluate_policy(verdict, require)
    say(f"--require {require}: {t('met' if policy.passed else 'NOT met', lang)} — {verdict_text(policy.reason, lang)}", err=True)
    return EXIT_OK if policy.passed else EXIT_GATE


def run_diff(args: argparse.Namespace) -> int:
    from omk.engine.variant_records import records_of_report
    from omk.records.document import read_document
    from omk.stats import diff_runs

    documents = [read_document(Path(p)) for p in (args.run_a, args.run_b)]
    a, b = (records_of_report(d) for d in documents)
    diff = diff_runs(a, b, trivial=args.trivial, targets=(documents[0].target.name, documents[1].target.name))
    flipped = {c.sample_id for c in diff.changes if c.flipped}
    if flipped:  # a second pass keeps only the flipped samples' first runs
        diff = diff.with_assertions(*(_first_results(d, flipped) for d in documents))
    if args.json:
        say(json.dumps(diff.to_dict(), ensure_ascii=False, indent=2))
    else:
        from omk.io.textsafe import for_terminal

        for line in diff_lines(diff, (args.run_a, args.run_b), getattr(args, "lang", None) or "en"):
            say(for_terminal(line))
    return EXIT_GATE if args.fail_on_regression and diff.regressed else EXIT_OK


def _first_results(document: Any, ids: set[str]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for result in document.results:
        if result.sample_id in ids and result.sample_id not in found:
            found[result.sample_id] = result
    return found


def _side(status: str | None, passed: bool | None, composite: float | None, lang: str = "en") -> str:
    from omk.report.i18n import t

    if status is None:
        return t("absent", lang, "diff")
    if status == "error":
        return t("error", lang)
    return f"{t('pass' if passed else 'fail', lang, 'diff')} {_fmt(composite)}"


def diff_lines(diff: RunDiff, runs: tuple[str, str] = ("", ""), lang: str = "en") -> list[str]:
    """The diff for a person: which run is A and which B (folder and target), one line of counts,
    then each changed sample, worst first, with the assertions that changed under a flipped one."""
    from omk.report.i18n import counted, t

    better, worse = {"fail_to_pass", "error_fixed", "score_up"}, {"pass_to_fail", "new_error", "score_down"}
    improved = sum(1 for c in diff.changes if better & set(c.kinds) and not worse & set(c.kinds))  # samples, not kinds
    run_word, target_word = t("run", lang), t("target", lang)
    lines = [
        f"{name}: {run or run_word + ' ' + name}{f' · {target_word} {target}' if target else ''}"
        for name, run, target in (("A", runs[0], diff.a_target), ("B", runs[1], diff.b_target))
    ]
    lines.append(
        t("{changed} changed, {unchanged} unchanged (A {a}, B {b}): {worse} got worse, {better} better (score changes under {trivial} ignored)", lang).format(
            changed=counted(len(diff.changes), "sample", "samples", lang), unchanged=diff.unchanged, a=diff.a_samples,
            b=counted(diff.b_samples, "sample", "samples", lang), worse=diff.regressed, better=improved, trivial=diff.trivial,
        )
    )  # fmt: skip
    for c in diff.changes:
        delta = f" ({c.delta:+.2f})" if c.delta is not None else ""
        a, b = _side(c.a_status, c.a_passed, c.a_composite, lang), _side(c.b_status, c.b_passed, c.b_composite, lang)
        kinds = ", ".join(t(k.replace("_", " "), lang, "diff") for k in c.kinds)
        lines.append(f"  {c.sample_id}: {kinds} · {a} → {b}{delta}")
        for change in c.assertions:
            said = change.b_message if change.b != "absent" else change.a_message
            lines.append(f"    {change.where} {change.label}: {t(change.a, lang, 'diff')} → {t(change.b, lang, 'diff')}{f' — {said}' if said else ''}")
    return lines
