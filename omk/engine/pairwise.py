"""Two targets, one sample set: an ordinary evaluation per target, then the judge's verdicts.

Each target gets a complete run (its own run folder, report.json and gate): A in the run folder
(`out`, default `.omk/runs/<run_id>`), B in its `target-2/` subfolder. Then the judge compares the
two answers of every sample, Big Sky's `chat:evaluatePairwise` (omk/judge/comparison.py): a Big
Sky example gets one verdict per comparative evaluator it declares (none when it declares none, as
in Big Sky); every other sample gets one verdict, keyed `pairwise`. The verdicts go into A's report
as the `pairwise` block (docs/report-format.md) and A's report files are written again.

Verdicts never gate: the outcome passes when both runs' gates pass. Without a judge the verdicts
are skipped, and say so.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from omk.engine.options import EvalOptions
from omk.engine.report import Report
from omk.engine.run import Evaluation, new_run_id
from omk.errors import ConfigError, InputError
from omk.model import Sample
from omk.tasks import gather_all

OTHER_FOLDER = "target-2"
DEFAULT_KEY = "pairwise"
SCORES = {1: {"a": 1, "b": 0}, 2: {"a": 0, "b": 1}, 0: {"a": 0, "b": 0}}
WINNERS = {1: "a", 2: "b", 0: "tie"}


class PairwiseInterrupted(Exception):
    """One of the two runs was interrupted; its folder keeps what it finished."""


@dataclass(slots=True)
class PairwiseOutcome:
    reports: list[Report]  # A's (with the `pairwise` block), then B's
    block: dict[str, Any]  # the verdicts, as report.json's `pairwise` block


def _default_run(evaluation: Evaluation) -> Report | None:
    return evaluation.finish(asyncio.run(evaluation.execute()))


def run_pairwise(
    options: EvalOptions,
    targets: list[str],
    *,
    cwd: Path | None = None,
    run_one: Callable[[Evaluation], Report | None] = _default_run,
    announce: Callable[[int, str], None] | None = None,
) -> PairwiseOutcome:
    """Run both targets (`run_one` runs a prepared evaluation; None means it was interrupted)."""
    if len(targets) != 2:
        raise ConfigError(f"--target: a pairwise comparison takes two targets, got {len(targets)}")
    if options.resume:
        raise InputError("--resume continues one run: resume each target's run folder on its own (omk eval --resume DIR)")
    cwd = cwd or Path.cwd()
    out = Path(options.out) if options.out else Path(".omk") / "runs" / new_run_id(datetime.now(UTC))
    out = out if out.is_absolute() else cwd / out
    folders = [out, out / OTHER_FOLDER]
    reports, evaluations = [], []
    for n, (spec, folder) in enumerate(zip(targets, folders, strict=True), start=1):
        if announce is not None:
            announce(n, spec)
        evaluation = Evaluation.prepare(dataclasses.replace(options, target=spec, out=str(folder)), cwd=cwd)
        report = run_one(evaluation)
        if report is None:
            raise PairwiseInterrupted(str(folder))
        reports.append(report)
        evaluations.append(evaluation)
    first = evaluations[0]
    block = asyncio.run(verdicts(first.samples, reports, first.settings, use_cache=not options.no_cache, cwd=cwd))
    block["targets"] = [r.target for r in reports]
    block["reports"] = [".", OTHER_FOLDER]
    reports[0].pairwise = block
    reports[0].write(first.settings.formats)
    return PairwiseOutcome(reports, block)


async def verdicts(samples: list[Sample], reports: list[Report], settings: Any, use_cache: bool, cwd: Path) -> dict[str, Any]:
    from omk.cache import DEFAULT_PATH, open_cache
    from omk.judge import NO_JUDGE, build_judge, why_no_judge

    judge = build_judge(settings)
    by_id = [{r.sample.sample_id: r.to_dict() for r in report.results if r.repeat == 0} for report in reports]
    jobs = [(s, key) for s in samples for key in (s.comparisons if s.comparisons is not None else [DEFAULT_KEY])]
    if judge is None:
        why = why_no_judge(settings)
        why += " (use --judge)" if why == NO_JUDGE else ""
        entries = [entry(s, key, status="skipped", error=why) for s, key in jobs]
        return {"judge": None, "summary": summary(entries), "verdicts": entries}
    cache = open_cache(cwd / DEFAULT_PATH) if use_cache else None
    if cache is not None:
        judge.use_cache(cache)
    try:
        entries = await gather_all(*(_one(judge, s, key, by_id) for s, key in jobs))
    finally:
        await judge.close()
        if cache is not None:
            cache.close()
    block = {"judge": [c.spec for c in judge.clients], "summary": summary(entries), "verdicts": entries}
    block["summary"]["judge_cost_usd"] = judge.spent_usd()
    return block


async def _one(judge: Any, sample: Sample, key: str, by_id: list[dict[str, dict[str, Any]]]) -> dict[str, Any]:
    a, b = (side.get(sample.sample_id) for side in by_id)
    for name, result in (("A", a), ("B", b)):
        if result is None:
            return entry(sample, key, status="skipped", error=f"target {name} has no result for this sample")
        if result.get("status") != "ok":
            return entry(sample, key, status="error", error=f"target {name} failed on this sample: {result.get('error')}")
    verdict = await judge.prefer(transcript_of(sample, a), answer_of(a), answer_of(b))  # type: ignore[arg-type]
    if verdict["preference"] is None:
        return entry(sample, key, status="error", error=f"judge: {verdict['error']}")
    found = entry(sample, key, status="ok", preference=verdict["preference"], reason=verdict["reason"])
    if len(verdict["votes"]) > 1:
        found["votes"] = verdict["votes"]
    return found


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


def entry(
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


def summary(entries: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [v for v in entries if v["status"] == "ok"]
    return {
        "compared": len(ok),
        "a_better": sum(1 for v in ok if v["winner"] == "a"),
        "b_better": sum(1 for v in ok if v["winner"] == "b"),
        "ties": sum(1 for v in ok if v["winner"] == "tie"),
        "errored": sum(1 for v in entries if v["status"] == "error"),
        "skipped": sum(1 for v in entries if v["status"] == "skipped"),
    }
