"""`omk doctor`: validate a sample set (all problems at once), show what it covers and what it lacks.

Exit codes: 0 healthy; 1 an error-severity diagnostic or health below 70 (with `--strict`, any
warning too); 2 the samples (or the `--report` file) are not valid input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omk.cli.console import say
from omk.cli.main import EXIT_GATE, EXIT_INPUT, EXIT_OK
from omk.errors import InputError
from omk.report.i18n import counted, t
from omk.textsafe import for_terminal

if TYPE_CHECKING:
    from omk.records.document import ReportDocument

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan", "advice": "dim"}
TOP = 10


def _samples_for(args: argparse.Namespace, report: ReportDocument | None) -> list[Path] | None:
    """The sample files to examine: as given, else discovered, else (with --report) the run's own."""
    from omk.engine.inputs import resolve_samples

    if args.samples or report is None:
        return resolve_samples(args.samples, Path.cwd())
    try:
        return resolve_samples([], Path.cwd())
    except InputError:
        existing = [Path(f) for f in report.samples_files if Path(f).exists()]
        return existing or None


def run_doctor(args: argparse.Namespace) -> int:
    from omk.doctor import examine, verdict
    from omk.records.document import read_document

    report = read_document(Path(args.report)) if getattr(args, "report", None) else None
    paths = _samples_for(args, report)
    samples, files, ignored = None, [], []
    if paths is not None:
        from omk.loader import load_samples

        try:
            loaded = load_samples(paths)
        except InputError as exc:
            return _invalid(args, [str(p) for p in paths], exc)
        samples, files, ignored = loaded.samples, [str(f) for f in loaded.files], loaded.warnings
    result = examine(samples, files, report, ignored)
    healthy = verdict(result, strict=getattr(args, "strict", False))
    result["healthy"] = healthy
    if args.json:
        say(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        _print(result, healthy, strict=getattr(args, "strict", False), lang=getattr(args, "lang", None) or "en")
    return EXIT_OK if healthy else EXIT_GATE


def _invalid(args: argparse.Namespace, files: list[str], exc: InputError) -> int:
    problems = [
        {"file": p.file, "line": p.line, "where": p.where, "field": p.field, "message": p.message, "text": p.render()}
        for p in exc.problems
    ]
    if args.json:
        say(json.dumps({"files": files, "valid": False, "problems": problems, "healthy": False}, ensure_ascii=False, indent=2))
    else:
        from rich.text import Text

        from omk.cli.console import make_console
        from omk.report.plain import plain

        err = make_console(stderr=True)
        err.print(plain(f"{counted(len(problems), 'problem', 'problems')} found — the sample set is not valid", style="bold red"))
        for p in problems:
            err.print(Text(for_terminal(p["text"])), soft_wrap=True)
    return EXIT_INPUT


def _count_table(title: str, counts: dict[str, int], total: int):
    from omk.report.plain import PlainTable as Table
    from omk.report.plain import plain

    table = Table(title=title, title_justify="left", show_header=False, box=None, pad_edge=False)
    table.add_column(title, overflow="fold")
    table.add_column("n", justify="right")
    table.add_column("%", justify="right", style="dim")
    for name, n in counts.items():
        table.add_row(name, str(n), plain(f"{100 * n / total:.0f}%" if total else ""))
    return table


def _print(result: dict[str, Any], healthy: bool, strict: bool, lang: str = "en") -> None:
    from rich.text import Text

    from omk.cli.console import make_console
    from omk.report.plain import plain

    console = make_console()
    health = result["health"]
    style = "green" if health >= 90 else "yellow" if health >= 70 else "red"
    totals = result["totals"]
    head = Text.assemble(
        (f"omk doctor — {t('health', lang)} ", "bold"),
        (f"{health}/100", f"bold {style}"),
        plain(
            f"   {counted(totals['samples'], 'sample', 'samples', lang)} · {counted(totals['errors'], 'error', 'errors', lang)} · "
            f"{counted(totals['warnings'], 'warning', 'warnings', lang)} · {totals['infos']} {t('info', lang)}"
        ),
    )
    console.print(head)
    if result["files"]:
        console.print(plain(f"valid: {', '.join(result['files'])}", style="dim"), soft_wrap=True)
    if result["run"]:
        console.print(plain(f"run: {result['run']['run_id']} ({result['run']['results']} results)", style="dim"))
    if result["coverage"]:
        _print_coverage(result["coverage"], console)
    _print_diagnostics(result["diagnostics"], console, lang)
    for tip in result["recommendations"]:
        console.print(plain(f"→ {t(tip, lang)}", style="dim"))
    facts = [
        counted(totals["errors"], "error", "errors", lang),
        f"{t('health', lang)} {health} {'≥' if health >= 70 else '<'} 70",
    ]
    if strict:
        facts.append(f"{counted(totals['warnings'], 'warning', 'warnings', lang)} {t('(--strict allows none)', lang)}")
    verdict = t("healthy" if healthy else "unhealthy", lang)
    console.print(plain(f"{verdict}: {', '.join(facts)}", style="bold green" if healthy else "bold red"))


def _print_coverage(cov: dict[str, Any], console: Any) -> None:
    from rich.columns import Columns
    from rich.text import Text

    from omk.report.plain import panel, plain

    n = cov["samples"]
    tables = [
        _count_table("capability", dict(list(cov["capability"].items())[:8]), n),
        _count_table("difficulty", cov["difficulty"], n),
        _count_table("construct", cov["construct"], n),
        _count_table("provenance", cov["provenance"], n),
        _count_table("layers", cov["layers"], sum(cov["layers"].values())),
        _count_table("assertion types", cov["assertion_types"], sum(cov["assertion_types"].values())),  # every type in use
    ]
    console.print(panel(Columns(tables, padding=(0, 3)), title="coverage", title_align="left"))
    declared = cov["declared"]
    console.print(
        plain(
            f"declared: capability {declared['capability']}/{n} · difficulty {declared['difficulty']}/{n} · "
            f"construct {declared['construct']}/{n} · provenance {declared['provenance']}/{n}"
        )
    )
    console.print(plain(
        f"rubric {cov['with_rubric']} (avg {cov['avg_rubric_length'] or 0} chars) · dimensions {cov['with_dimensions']} · "
        f"mocks {cov['with_mocks']} · environment {cov['with_environment']} · tripwires {cov['tripwires']}")
    )
    if not any(declared.values()):
        console.print(Text("hint: no sample declares capability, difficulty, construct or provenance", style="yellow"))


def _said(d: dict[str, Any], lang: str) -> str:
    """A diagnostic's message; advice is said again in `lang` from its detail (the JSON keeps English)."""
    from omk.doctor.advice import message

    if lang == "en" or d["severity"] != "advice":
        return str(d["message"])
    return message(d["kind"], d["detail"], lambda text: t(text, lang), lambda n: counted(n, "sample", "samples", lang))


def _print_diagnostics(diags: list[dict[str, Any]], console: Any, lang: str = "en") -> None:
    """The issues grouped by severity and kind, the first `TOP` of each group."""
    from rich.text import Text

    from omk.report.plain import plain

    if not any(d["severity"] != "advice" for d in diags):  # advice is not an issue: said after this line
        console.print(Text(t("✓ no sample-quality issues found", lang), style="green"))
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for d in diags:
        groups.setdefault((d["severity"], d["kind"]), []).append(d)
    for (severity, kind), items in groups.items():
        console.print(Text.assemble((f"[{severity}] ", SEVERITY_STYLE[severity]), (kind, "bold"), plain(f" — {len(items)}")))
        for d in items[:TOP]:
            who = f"{d['sample_id']}: " if d["sample_id"] else ""
            console.print(Text(for_terminal(f"  {who}{_said(d, lang)}")), soft_wrap=True)
        if len(items) > TOP:
            console.print(plain("  " + t("… and {n} more (see --json)", lang).format(n=len(items) - TOP), style="dim"))
