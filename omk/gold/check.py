"""`omk gold check`: a run's judge scores against people's labels (omk/records/gold.py).

Per judge (a single judge; an ensemble's members one by one and the ensemble together) and per
item (the rubric against the people's `score`, each dimension against theirs): Krippendorff's α
between the judge and the people's mean for the sample, its bootstrap interval, the mean bias
(judge − people) and the samples with the largest difference. Pass/fail: the judge passes a
sample when its score reaches the run's threshold; the people's verdict is their majority (a tie
leaves the sample out); Cohen's κ and the confusion table. With several raters, the people's own
α per item. Only a sample's first run (repeat 0) is checked: people label one output.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean

import msgspec

from omk.gold.labels import GoldLabel
from omk.records import SampleResult
from omk.records.gold import (
    ALPHA_BAR,
    AlphaBounds,
    Disagreement,
    GoldCheck,
    ItemAgreement,
    JudgeAgreement,
    PassAgreement,
    PeopleAgreement,
)
from omk.stats.agreement import Level, alpha, alpha_interval, cohen_kappa, confusion

DISAGREEMENTS = 5  # samples listed per judge and item
ROUND = 4


class _Row(msgspec.Struct, frozen=True, gc=False):
    """One labelled sample as the check needs it."""

    sample_id: str
    items: Mapping[str, Mapping[str | None, float | None]]  # item → judge (None: together) → score
    members: Mapping[str, float | None]  # an ensemble member → its sample score
    score: float | None  # the judge layer's score
    labels: Sequence[GoldLabel]


def _people_scores(labels: Sequence[GoldLabel], item: str) -> list[float]:
    if item == "rubric":
        return [x.score for x in labels if x.score is not None]
    name = item.removeprefix("dimension ")
    return [x.dimensions[name] for x in labels if name in x.dimensions]


def _people_pass(labels: Sequence[GoldLabel]) -> bool | None:
    votes = [x.passed for x in labels if x.passed is not None]
    yes = sum(1 for v in votes if v)
    if not votes or 2 * yes == len(votes):
        return None
    return 2 * yes > len(votes)


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, ROUND)


def _bounds(units: list[list[float]], level: Level, resamples: int, seed: int) -> AlphaBounds | None:
    found = alpha_interval(units, level, resamples=resamples, seed=seed)
    return AlphaBounds(round(found.low, ROUND), round(found.high, ROUND)) if found else None


def _item(rows: Sequence[_Row], item: str, judge: str | None, level: Level, resamples: int, seed: int) -> ItemAgreement | None:
    pairs: list[tuple[str, float, float]] = []
    for row in rows:
        judged = row.items.get(item, {}).get(judge)
        people = _people_scores(row.labels, item)
        if judged is not None and people:
            pairs.append((row.sample_id, judged, fmean(people)))
    if not pairs:
        return None
    units = [[j, p] for _, j, p in pairs]
    worst = sorted(pairs, key=lambda t: -abs(t[1] - t[2]))[:DISAGREEMENTS]
    return ItemAgreement(
        item=item,
        samples=len(pairs),
        alpha=_r(alpha(units, level)),
        ci=_bounds(units, level, resamples, seed),
        bias=_r(fmean(j - p for _, j, p in pairs)),
        disagreements=tuple(Disagreement(sid, round(j, ROUND), round(p, ROUND)) for sid, j, p in worst if j != p),
    )


def _passes(rows: Sequence[_Row], judge: str | None, threshold: float) -> PassAgreement | None:
    judged, people = [], []
    for row in rows:
        score = row.score if judge is None else row.members.get(judge)
        verdict = _people_pass(row.labels)
        if score is not None and verdict is not None:
            judged.append(score >= threshold)
            people.append(verdict)
    if not judged:
        return None
    table = confusion(judged, people)
    return PassAgreement(table.n, _r(cohen_kappa(judged, people)), table.both_pass, table.a_pass_b_fail, table.a_fail_b_pass, table.both_fail)


def _judge(rows: Sequence[_Row], name: str, key: str | None, member: bool, settings: CheckSettings) -> JudgeAgreement | None:
    names = sorted({item for row in rows for item in row.items}, key=lambda n: (n != "rubric", n))
    items = tuple(
        found for n in names if (found := _item(rows, n, key, settings.level, settings.resamples, settings.seed)) is not None
    )
    passes = _passes(rows, key, settings.threshold)
    if not items and passes is None:
        return None
    reasons = tuple(_reason(i) for i in items if i.below_bar)
    return JudgeAgreement(name, member, items, passes, bool(reasons), reasons)


def _reason(i: ItemAgreement) -> str:
    a = "n/a" if i.alpha is None else f"{i.alpha:.2f}"
    ci = f" [{i.ci.low:.2f}, {i.ci.high:.2f}]" if i.ci else ""
    return f"{i.item} α={a}{ci} < {ALPHA_BAR}"


def _people(rows: Sequence[_Row], settings: CheckSettings) -> tuple[PeopleAgreement, ...]:
    items = sorted({item for row in rows for item in row.items} | ({"rubric"} if any(x.score is not None for r in rows for x in r.labels) else set()), key=lambda n: (n != "rubric", n))
    found = []
    for item in items:
        units = [scores for row in rows if len(scores := _people_scores(row.labels, item)) >= 2]
        if not units:
            continue
        raters = len({x.rater for row in rows for x in row.labels})
        a = alpha(units, settings.level)
        found.append(PeopleAgreement(item, len(units), raters, _r(a), _bounds(units, settings.level, settings.resamples, settings.seed)))
    return tuple(found)


class CheckSettings(msgspec.Struct, frozen=True, gc=False):
    threshold: float = 3.5  # the judge passes a sample at or above it (the run's threshold)
    level: Level = "interval"
    resamples: int = 1000
    seed: int = 0


def check(
    results: Iterable[SampleResult],
    labels: Mapping[str, Sequence[GoldLabel]],
    judges: Sequence[str],
    settings: CheckSettings | None = None,
) -> GoldCheck:
    """The check of a run's `results` (judged by `judges`, the run's judge models) against
    `labels` by sample id."""
    settings = settings or CheckSettings()
    rows: list[_Row] = []
    seen: set[str] = set()
    for r in results:
        if r.repeat != 0 or r.sample_id not in labels:
            continue
        seen.add(r.sample_id)
        block = r.judge
        if block is None or r.status != "ok":
            continue
        members = {k: (float(v) if isinstance(v, int | float) else None) for k, v in (block.members or {}).items() if isinstance(k, str)}
        score = float(block.score) if block.score is not None else None
        rows.append(_Row(r.sample_id, block.item_scores(), members, score, labels[r.sample_id]))
    ensemble = len(judges) > 1
    together = f"ensemble ({', '.join(judges)})" if ensemble else (judges[0] if judges else "judge")
    entries = [_judge(rows, together, None, False, settings)]
    if ensemble:
        entries += [_judge(rows, name, name, True, settings) for name in judges]
    return GoldCheck(
        level=settings.level,
        bar=ALPHA_BAR,
        labelled=len(seen),
        labels=sum(len(v) for v in labels.values()),
        unmatched=tuple(sorted(set(labels) - seen)),
        judges=tuple(e for e in entries if e is not None),
        people=_people(rows, settings),
        resamples=settings.resamples,
        seed=settings.seed,
    )
