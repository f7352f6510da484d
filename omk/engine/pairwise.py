"""The pairwise judge of an experiment: control and treatment answers of each sample, compared.

`omk eval S --target A --target B` is an experiment whose variants differ by target (A the
control, B the treatment; omk/engine/experiment.py). After the variants have run, and when a
judge is configured, the judge compares each sample's A and B answers, Big Sky's
`chat:evaluatePairwise` (omk/judge/comparison.py): a Big Sky example gets one verdict per
comparative evaluator it declares (none when it declares none, as in Big Sky); every other
sample gets one verdict, keyed `pairwise`.

Each comparison is asked in both orders, A shown first and B shown first; a side wins only when
both orders prefer it, and any disagreement is a tie counted as position-inconsistent
(`combine_orders`). The answers compared are each variant's first repeat. The treatment's win
rate over the decisive verdicts gets a Wilson interval per key (omk/stats/winrate.py). The
block goes into the experiment block as `experiment.pairwise` (docs/experiments.md); it never
changes the verdict or the exit code. Without a judge every verdict is skipped and says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from omk.core.tasks import gather_all
from omk.judge.comparison import FLIP, combine_orders
from omk.records import SampleResult, TurnResult
from omk.records.experiment_block import (
    WINNERS,
    Pair,
    PairwiseBlock,
    PairwiseOrder,
    PairwiseVerdict,
    Tally,
    Vote,
    WinRateRow,
    positions,
)
from omk.samples.model import Sample

DEFAULT_KEY = "pairwise"
RULE = "a side wins only when the judge prefers it in both orders (A first, B first); otherwise a tie"


@dataclass(slots=True)
class Arm:
    """One variant as the pairwise judge sees it: its name, target, report folder and results."""

    name: str
    target: dict[str, Any]
    report: str | None  # its run folder, relative to the experiment's report.json (None: in memory)
    results: Sequence[SampleResult]

    def first_repeat(self) -> dict[str, SampleResult]:
        return {r.sample_id: r for r in self.results if r.repeat == 0}


async def pairwise_block(
    samples: list[Sample], control: Arm, treatments: list[Arm], settings: Any, *, use_cache: bool, cwd: Path, level: float = 0.95
) -> dict[str, Any]:
    """The verdicts of every treatment against the control, as the experiment's `pairwise` block."""
    from omk.judge import NO_JUDGE, build_judge, why_no_judge
    from omk.store.cache import DEFAULT_PATH, open_cache

    jobs = [(s, key) for s in samples for key in (s.comparisons if s.comparisons is not None else [DEFAULT_KEY])]
    judge = build_judge(settings)
    if judge is None:
        why = why_no_judge(settings)
        why += " (use --judge)" if why == NO_JUDGE else ""
        skipped = [entry(s, key, status="skipped", error=why) for s, key in jobs]
        return PairwiseBlock(None, None, RULE, tuple(make_pair(control, b, skipped, level, ()) for b in treatments)).to_json()
    cache = open_cache(cwd / DEFAULT_PATH) if use_cache else None
    if cache is not None:
        judge.use_cache(cache)
    a = control.first_repeat()
    try:
        found = await gather_all(*(_compare(judge, control.name, a, b, jobs) for b in treatments))
    finally:
        await judge.close()
        if cache is not None:
            cache.close()
    specs = tuple(c.spec for c in judge.clients)
    pairs = tuple(make_pair(control, b, entries, level, specs) for b, entries in zip(treatments, found, strict=True))
    return PairwiseBlock(specs, judge.spent_usd(), RULE, pairs).to_json()


async def _compare(judge: Any, a_name: str, a: dict[str, SampleResult], arm: Arm, jobs: list[tuple[Sample, str]]) -> list[PairwiseVerdict]:
    b = arm.first_repeat()
    names = (f"A ({a_name})", f"B ({arm.name})")
    return await gather_all(*(_one(judge, s, key, (a.get(s.sample_id), b.get(s.sample_id)), names) for s, key in jobs))


def make_pair(control: Arm, treatment: Arm, entries: list[PairwiseVerdict], level: float, judges: tuple[str, ...]) -> Pair:
    return Pair(
        control=control.name,
        treatment=treatment.name,
        targets=(_shown(control.target), _shown(treatment.target)),
        judges=judges,
        tally=Tally.of(entries),
        position=positions(entries),
        win_rate=win_rates(entries, level),
        verdicts=tuple(entries),
        described=(control.target, treatment.target),
        reports=(control.report, treatment.report),
    )


def regroup(pair: Pair, entries: list[PairwiseVerdict], level: float) -> Pair:
    """`pair` with other verdicts (a merge of shards: every shard's, in the plan's order), its
    tallies and win rates counted again over them."""
    return msgspec.structs.replace(
        pair, tally=Tally.of(entries), position=positions(entries), win_rate=win_rates(entries, level), verdicts=tuple(entries)
    )


def win_rates(entries: list[PairwiseVerdict], level: float) -> tuple[WinRateRow, ...]:
    """The treatment's win rate per comparison key, over the decisive verdicts."""
    from omk.stats.pairwise_rate import WinRate

    keys = list(dict.fromkeys(v.key for v in entries if v.key is not None))
    ok = [v for v in entries if v.status == "ok"]

    def count(key: str, winner: str) -> int:
        return sum(1 for v in ok if v.key == key and v.winner == winner)

    return tuple(WinRateRow.of(WinRate(key, count(key, "b"), count(key, "a"), count(key, "tie"), level=level)) for key in keys)


def _shown(target: dict[str, Any]) -> str:
    return str(target.get("spec") or target.get("kind") or "?")


async def _one(judge: Any, sample: Sample, key: str, pair: tuple[SampleResult | None, SampleResult | None], names: tuple[str, str]) -> PairwiseVerdict:
    a, b = pair
    for name, result in zip(names, pair, strict=True):
        if result is None:
            return entry(sample, key, status="skipped", error=f"{name} has no result for this sample")
        if result.status != "ok":
            return entry(sample, key, status="error", error=f"{name} failed on this sample: {result.error}")
    assert a is not None and b is not None
    messages, answer_a, answer_b = transcript_of(sample, a), answer_of(a), answer_of(b)
    first, second = await gather_all(judge.prefer(messages, answer_a, answer_b), judge.prefer(messages, answer_b, answer_a))
    for order, verdict in (("A first", first), ("B first", second)):
        if verdict["preference"] is None:
            return entry(sample, key, status="error", error=f"judge ({order}): {verdict['error']}")
    preference, bias = combine_orders(first["preference"], second["preference"])
    orders = (_order(first, flip=False), _order(second, flip=True))
    if bias is None:
        reason = first["reason"] or second["reason"]
    else:
        reason = f"the two orders disagree (A first: {_said(orders[0])}; B first: {_said(orders[1])}), so a tie"
    return entry(sample, key, status="ok", preference=preference, reason=reason, orders=orders, position=bias)


def _order(verdict: dict[str, Any], *, flip: bool) -> PairwiseOrder:
    """One order's verdict in A/B terms (with B shown first, the judge's 1 means B)."""
    turn = FLIP if flip else {1: 1, 2: 2, 0: 0}
    votes = verdict["votes"] if len(verdict["votes"]) > 1 else []
    return PairwiseOrder(
        WINNERS[turn[verdict["preference"]]],
        verdict["reason"],
        tuple(Vote(v["judge"], turn[v["preference"]], v["reason"]) for v in votes),
    )


def _said(order: PairwiseOrder) -> str:
    return {"a": "A better", "b": "B better"}.get(order.winner or "", "tie")


def transcript_of(sample: Sample, result: SampleResult) -> list[dict[str, Any]]:
    """The conversation the judge reads: Big Sky's input messages as written, else the history
    and the prompt; for a conversation (`turns`), the history and every user turn (the replies
    differ between the variants from turn 1 on, so each answer carries its own: `answer_of`)."""
    if sample.source_format == "bigsky":
        messages = (sample.raw.get("inputs") or {}).get("messages")
        if isinstance(messages, list):
            return [m for m in messages if isinstance(m, dict)]
    if turns := result.turns:
        return [*sample.history, *({"role": "user", "content": t.prompt or ""} for t in turns)]
    if sample.turns:
        return [*sample.history, *({"role": "user", "content": t.prompt} for t in sample.turns)]
    return [*sample.history, {"role": "user", "content": result.prompt or sample.prompt}]


def answer_of(result: SampleResult) -> str:
    """What the judge reads of one variant: its reply and tool calls, or for a conversation every
    turn (`**user**: prompt`, then `**assistant**: reply` and its tool calls)."""
    from omk.judge.comparison import answer_text

    def one(unit: SampleResult | TurnResult) -> str:
        return answer_text(unit.output, [(c.tool, c.input) for c in unit.trace.tool_calls])

    if not result.turns:
        return one(result)
    blocks = []
    for turn in result.turns:
        reply = one(turn) if turn.status == "ok" else f"(no reply: turn {turn.status})"
        blocks.append(f"**user**: {turn.prompt or ''}\n**assistant**: {reply}")
    return "\n\n".join(blocks)


def entry(
    sample: Sample,
    key: str,
    *,
    status: str,
    preference: int | None = None,
    reason: str = "",
    error: str | None = None,
    orders: tuple[PairwiseOrder, PairwiseOrder] | None = None,
    position: str | None = None,
) -> PairwiseVerdict:
    """One verdict. `preference` and `winner` are the combined verdict of both orders; `orders`
    what each order said (A shown first, then B, in A/B terms); `position` how they disagreed
    (None: they agreed)."""
    return PairwiseVerdict.of(
        sample.sample_id, key, status, preference=preference, reason=reason, error=error, orders=orders, position=position
    )


def summary(entries: list[PairwiseVerdict]) -> dict[str, int]:
    """The tally of the verdicts, as a pair's `summary`."""
    return Tally.of(entries).to_json()


def position(entries: list[PairwiseVerdict]) -> dict[str, int]:
    """How often the two orders agreed, and how they disagreed, as a pair's `position`."""
    return positions(entries)
