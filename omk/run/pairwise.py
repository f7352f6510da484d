"""Two targets, one sample set: `omk eval SAMPLES --target A --target B`.

Each target gets a complete ordinary run (its own run folder, report.json, exit gate): A in the
run folder (`--out`, default `.omk/runs/<run_id>`), B in its `target-2/` subfolder. Then the judge
compares the two answers of every sample, Big Sky's `chat:evaluatePairwise` (omk/judge/comparison.py):
a Big Sky example gets one verdict per comparative evaluator it declares (none when it declares
none, as in Big Sky); every other sample gets one verdict, keyed `pairwise`. The verdicts go into
A's report.json as the `pairwise` block (docs/report-format.md) and the formats are written again.

The exit code is the worse of the two runs' gates; verdicts never gate. Without a judge the
verdicts are skipped, and say so.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from omk.errors import ConfigError, InputError
from omk.model import Sample
from omk.tasks import gather_all

OTHER_FOLDER = "target-2"
DEFAULT_KEY = "pairwise"
SCORES = {1: {"a": 1, "b": 0}, 2: {"a": 0, "b": 1}, 0: {"a": 0, "b": 0}}
WINNERS = {1: "a", 2: "b", 0: "tie"}


def run_pairwise(args: argparse.Namespace, targets: list[str]) -> int:
    from omk.cli.console import make_console
    from omk.cli.eval_cmd import load_inputs, new_run_id, run_eval, sample_paths, select
    from omk.cli.main import EXIT_INTERRUPTED
    from omk.config import load_settings
    from omk.report import write_formats
    from omk.report.json_report import read_report

    if len(targets) > 2:
        raise ConfigError(f"--target: a pairwise comparison takes two targets, got {len(targets)}")
    if args.resume:
        raise InputError("--resume continues one run: resume each target's run folder on its own (omk eval --resume DIR)")
    cwd = Path.cwd()
    out = Path(args.out) if args.out else cwd / ".omk" / "runs" / new_run_id(datetime.now(UTC))
    folders = [out, out / OTHER_FOLDER]
    console = make_console()
    codes = []
    for n, (spec, folder) in enumerate(zip(targets, folders, strict=True), start=1):
        if not args.quiet:
            console.print(f"[bold]target {n} of 2 ({'A' if n == 1 else 'B'}): {spec}[/bold]")
        code = run_eval(argparse.Namespace(**{**vars(args), "target": spec, "out": str(folder)}))
        if code == EXIT_INTERRUPTED:
            return code
        codes.append(code)
    reports = [read_report(folder) for folder in folders]
    cli = {**vars(args), "target": targets[0]}
    paths = sample_paths(cli, cwd)
    settings = load_settings(paths, cwd, cli)
    samples = select(load_inputs(cli, paths, cwd).samples, cli.get("filter"))
    block = asyncio.run(_verdicts(samples, reports, settings, use_cache=not args.no_cache))
    block["targets"] = [r.get("target") for r in reports]
    block["reports"] = [".", OTHER_FOLDER]
    reports[0]["pairwise"] = block
    write_formats(folders[0], reports[0], settings.formats, settings.lang)
    if not args.quiet:
        print_pairwise(block, console)
    return max(codes)


async def _verdicts(samples: list[Sample], reports: list[dict[str, Any]], settings: Any, use_cache: bool) -> dict[str, Any]:
    from omk.judge import NO_JUDGE, build_judge, why_no_judge

    judge = build_judge(settings)
    by_id = [{r["sample_id"]: r for r in report["results"] if r.get("repeat", 0) == 0} for report in reports]
    jobs = [(s, key) for s in samples for key in (s.comparisons if s.comparisons is not None else [DEFAULT_KEY])]
    if judge is None:
        why = why_no_judge(settings)
        why += " (use --judge)" if why == NO_JUDGE else ""
        verdicts = [_entry(s, key, status="skipped", error=why) for s, key in jobs]
        return {"judge": None, "summary": _summary(verdicts), "verdicts": verdicts}
    if use_cache:
        judge.use_cache()
    try:
        verdicts = await gather_all(*(_one(judge, s, key, by_id) for s, key in jobs))
    finally:
        await judge.close()
    block = {"judge": [c.spec for c in judge.clients], "summary": _summary(verdicts), "verdicts": verdicts}
    block["summary"]["judge_cost_usd"] = judge.spent_usd()
    return block


async def _one(judge: Any, sample: Sample, key: str, by_id: list[dict[str, dict[str, Any]]]) -> dict[str, Any]:
    a, b = (side.get(sample.sample_id) for side in by_id)
    for name, result in (("A", a), ("B", b)):
        if result is None:
            return _entry(sample, key, status="skipped", error=f"target {name} has no result for this sample")
        if result.get("status") != "ok":
            return _entry(sample, key, status="error", error=f"target {name} failed on this sample: {result.get('error')}")
    verdict = await judge.prefer(transcript_of(sample, a), answer_of(a), answer_of(b))  # type: ignore[arg-type]
    if verdict["preference"] is None:
        return _entry(sample, key, status="error", error=f"judge: {verdict['error']}")
    entry = _entry(sample, key, status="ok", preference=verdict["preference"], reason=verdict["reason"])
    if len(verdict["votes"]) > 1:
        entry["votes"] = verdict["votes"]
    return entry


def transcript_of(sample: Sample, result: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation the judge reads: Big Sky's input messages as written, else the history
    and the prompt; for a conversation (`turns`), the history and every user turn (the replies
    differ between the targets from turn 1 on, so each answer carries its own: `answer_of`)."""
    if sample.source_format == "bigsky":
        messages = (sample.raw.get("inputs") or {}).get("messages")
        if isinstance(messages, list):
            return [m for m in messages if isinstance(m, dict)]
    if turns := result.get("turns"):
        return [*sample.history, *({"role": "user", "content": t.get("prompt") or ""} for t in turns)]
    if sample.turns:
        return [*sample.history, *({"role": "user", "content": t.prompt} for t in sample.turns)]
    return [*sample.history, {"role": "user", "content": result.get("prompt") or sample.prompt}]


def answer_of(result: dict[str, Any]) -> str:
    """What the judge reads of one target: its reply and tool calls, or for a conversation every
    turn (`**user**: prompt`, then `**assistant**: reply` and its tool calls)."""
    from omk.judge.comparison import answer_text

    def one(unit: dict[str, Any]) -> str:
        calls = [(c.get("tool"), c.get("input")) for c in (unit.get("trace") or {}).get("tool_calls") or []]
        return answer_text(unit.get("output"), calls)

    turns = result.get("turns")
    if not turns:
        return one(result)
    blocks = []
    for turn in turns:
        reply = one(turn) if turn.get("status") == "ok" else f"(no reply: turn {turn.get('status')})"
        blocks.append(f"**user**: {turn.get('prompt') or ''}\n**assistant**: {reply}")
    return "\n\n".join(blocks)


def _entry(
    sample: Sample, key: str, *, status: str, preference: int | None = None, reason: str = "", error: str | None = None
) -> dict[str, Any]:
    return {
        "sample_id": sample.sample_id,
        "key": key,
        "status": status,
        "preference": preference,
        "winner": WINNERS.get(preference) if preference is not None else None,  # type: ignore[arg-type]
        "scores": SCORES.get(preference) if preference is not None else None,  # type: ignore[arg-type]
        "reason": reason,
        "error": error,
    }


def _summary(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [v for v in verdicts if v["status"] == "ok"]
    return {
        "compared": len(ok),
        "a_better": sum(1 for v in ok if v["winner"] == "a"),
        "b_better": sum(1 for v in ok if v["winner"] == "b"),
        "ties": sum(1 for v in ok if v["winner"] == "tie"),
        "errored": sum(1 for v in verdicts if v["status"] == "error"),
        "skipped": sum(1 for v in verdicts if v["status"] == "skipped"),
    }


def print_pairwise(block: dict[str, Any], console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    a, b = (t.get("spec") if isinstance(t, dict) else t for t in block["targets"])
    table = Table(title=f"Pairwise: A = {a} · B = {b}", title_justify="left")
    for col in ("sample", "key", "verdict", "reason"):
        table.add_column(col, overflow="fold")
    for v in block["verdicts"]:
        verdict = {"a": "A better", "b": "B better", "tie": "tie"}.get(v["winner"]) if v["status"] == "ok" else v["status"]
        table.add_row(v["sample_id"], v["key"], verdict or "—", v["reason"] if v["status"] == "ok" else (v["error"] or ""))
    console.print(table)
    s = block["summary"]
    line = f"A better {s['a_better']} · B better {s['b_better']} · tie {s['ties']} · errored {s['errored']} · skipped {s['skipped']}"
    console.print(Text(line, style="bold"))
