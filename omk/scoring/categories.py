"""The run summary by category (M365 `category`, and any sample that sets one).

`summary.categories` in report.json is a list, one entry per category in order of first
appearance, results without a category last (category `null`); an empty list when no result has
a category. Each entry counts like the run summary does: total, passed, failed, errored, the
pass rate, and the mean composite over the results that ran and were graded.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import TYPE_CHECKING

from omk.records import SampleResult
from omk.records.document import Bounds, Category
from omk.scoring.intervals import mean_interval, pass_rate_interval, per_sample
from omk.scoring.layers import round2
from omk.stats.bootstrap import Draws

if TYPE_CHECKING:
    from omk.scoring.digest import Digest

LAYERS = ("fact", "behavior", "judge")


def _intervals(members: Sequence[SampleResult | Digest], passed: int, draws: Draws | None) -> tuple[Bounds | None, Bounds | None]:
    from omk.scoring.digest import digests

    found = digests(members)
    graded = [r for r in found if r.graded]
    samples = len({r.sample_id for r in found})
    composite = mean_interval(per_sample(graded, lambda r: r.scores.composite, once=samples == len(found)), draws=draws)
    return pass_rate_interval(passed, len(found), samples), composite


def category_breakdown(results: Sequence[SampleResult | Digest], draws: Draws | None = None) -> tuple[Category, ...]:
    """Per category, in order of first appearance; results (or their digests) in plan order.
    `draws` shares the bootstrap's draws with the rest of the summary."""
    if not any(r.category for r in results):
        return ()
    groups: dict[str | None, list[SampleResult | Digest]] = {}
    for r in results:
        groups.setdefault(r.category or None, []).append(r)
    if None in groups:
        groups[None] = groups.pop(None)  # the uncategorised last
    out = []
    for category, members in groups.items():
        passed = sum(1 for r in members if r.passed)
        errored = sum(1 for r in members if r.status != "ok")
        graded = [
            r.scores.composite
            for r in members
            if r.status == "ok" and any(getattr(r.scores, layer) is not None for layer in LAYERS)
        ]
        rate = round(passed / len(members), 4)
        composite = round2(fmean(graded)) if graded else None
        cis = _intervals(members, passed, draws)
        out.append(Category(category, len(members), passed, len(members) - passed, errored, rate, composite, *cis, intervals=True))
    return tuple(out)
