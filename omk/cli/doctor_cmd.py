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
from omk.core.errors import InputError
from omk.io.textsafe import for_terminal
from omk.report.i18n import counted, t

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


def _count_table(title: str, counts: dict[str, int], total: int, lang: str = "en"):
    from omk.report.plain import PlainTable as Table
    from omk.report.plain import plain

    table = Table(title=t(title, lang), title_justify="left", show_header=False, box=None, pad_edge=False)
    table.add_column(t(title, lang))
    table.add_column("n", justify="right")
    table.add_column("%", justify="right", style="dim")
    for name, n in counts.items():
        table.add_row(t(name, lang) if name == "unspecified" else name, str(n), plain(f"{100 * n / total:.0f}%" if total else ""))
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
        console.print(plain(f"{t('valid', lang)}: {', '.join(result['files'])}", style="dim"), soft_wrap=True)
    if result["run"]:
        run = result["run"]
        console.print(plain(t("run: {run_id} ({n} results)", lang).format(run_id=run["run_id"], n=run["results"]), style="dim"))
    if result["coverage"]:
        _print_coverage(result["coverage"], console, lang)
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


def _print_coverage(cov: dict[str, Any], console: Any, lang: str = "en") -> None:
    from rich.columns import Columns
    from rich.text import Text

    from omk.report.plain import panel, plain

    n = cov["samples"]
    tables = [
        _count_table("capability", dict(list(cov["capability"].items())[:8]), n, lang),
        _count_table("difficulty", cov["difficulty"], n, lang),
        _count_table("construct", cov["construct"], n, lang),
        _count_table("provenance", cov["provenance"], n, lang),
        _count_table("layers", cov["layers"], sum(cov["layers"].values()), lang),
        _count_table("assertion types", cov["assertion_types"], sum(cov["assertion_types"].values()), lang),  # every type in use
    ]
    console.print(panel(Columns(tables, padding=(0, 3)), title=t("coverage", lang), title_align="left"))
    declared = cov["declared"]
    console.print(plain(f"{t('declared', lang)}: " + " · ".join(f"{t(k, lang)} {declared[k]}/{n}" for k in ("capability", "difficulty", "construct", "provenance"))))
    console.print(plain(
        t("rubric {r} (avg {chars} chars) · dimensions {d} · mocks {m} · environment {e} · tripwires {w}", lang).format(
            r=cov["with_rubric"], chars=cov["avg_rubric_length"] or 0, d=cov["with_dimensions"], m=cov["with_mocks"],
            e=cov["with_environment"], w=cov["tripwires"],
        )
    ))  # fmt: skip
    if not any(declared.values()):
        console.print(Text(t("hint: no sample declares capability, difficulty, construct or provenance", lang), style="yellow"))


def _said(d: dict[str, Any], lang: str) -> str:
    """A diagnostic's message; advice is said again in `lang` from its detail (the JSON keeps English)."""
    from omk.doctor.advice import message

    if lang == "en":
        return str(d["message"])
    if d["severity"] != "advice":
        from omk.report.i18n import doctor_text

        return doctor_text(str(d["message"]), lang)
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
