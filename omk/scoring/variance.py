"""Where the composite's spread comes from, under `--repeat N` and `--judge-repeat J`
(docs/scoring.md, "Where the spread comes from").

A result's composite y_ir (sample i, run r) is read as a nested model

    y_ir = μ + s_i + e_ir + u_ir,   u_ir the mean of J judge calls' noise,

with three variances: σ²_sample (how samples differ in difficulty), σ²_run (the agent's
run-to-run variation on one sample) and σ²_judge (one judge call's noise, on the composite's
scale). The judge's part is measured directly: each judge item asked J ≥ 2 times keeps its J
scores (`samples` in the judge block), and their variance is one call's noise. The other two come
from the one-way nested analysis of variance of y_ir by sample (method of moments):

    within-sample mean square  W = σ²_run + σ²_judge / J
    between-sample mean square B = R·σ²_sample + W        (R runs per sample; the mean R when unequal)

so σ²_run = W − σ²_judge/J and σ²_sample = (B − W)/R, each floored at 0. The variance of the
run's mean composite over n samples is then

    V = σ²_sample/n + σ²_run/(n·R) + σ²_judge/(n·R·J),

and `shares` are the three terms' fractions of V. The advice compares what one more dollar buys
in each direction: the fall of V per dollar from one more sample (costs R target calls and R·J·k
judge calls, k judge items per run), one more run of every sample, or one more call per judge
item. With no known cost, calls count as the price (a target call and a judge call alike), and
`per_dollar` is false. At the same price per run, one more sample always narrows the interval
at least as much as one more run of a sample already there (it adds a run *and* a draw of
difficulty), so repeats win only when samples cannot be added: `advice_without_samples` is the
better of repeats and judge calls for that case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean, variance

import msgspec

from omk.records import SampleResult, TurnResult
from omk.records.judging import JudgeBlock, JudgeItem
from omk.records.repeats import VarianceSources
from omk.scoring.layers import is_graded


class Design(msgspec.Struct, frozen=True, gc=False):
    """The run's shape and prices: n samples × R runs, J calls per judge item, k judge items per run."""

    samples: int
    repeats: float
    judge_calls: int
    judge_items: float
    target_cost: float | None
    judge_cost: float | None


class Components(msgspec.Struct, frozen=True, gc=False):
    sample: float
    run: float
    judge: float | None  # per judge call; None when not measurable (J = 1)


def components(groups: Sequence[Sequence[float]], judge_noise: float | None, judge_calls: int) -> Components | None:
    """The three variances from each sample's composites (`groups`) and one call's judge noise."""
    groups = [g for g in groups if g]
    if len(groups) < 2:
        return None
    within_df = sum(len(g) - 1 for g in groups)
    within = sum((len(g) - 1) * variance(g) for g in groups if len(g) > 1) / within_df if within_df else 0.0
    runs = len([y for g in groups for y in g]) / len(groups)
    means = [fmean(g) for g in groups]
    between = runs * variance(means)
    judge_part = judge_noise / judge_calls if judge_noise is not None else 0.0
    if not within_df:  # one run per sample: the agent's variation cannot be told from difficulty
        return Components(max(0.0, between - judge_part), 0.0, judge_noise)
    return Components(max(0.0, (between - within) / runs), max(0.0, within - judge_part), judge_noise)


def mean_variance(c: Components, n: float, r: float, j: float) -> tuple[float, float, float]:
    """The three terms of the variance of the run's mean composite."""
    return c.sample / n, c.run / (n * r), (c.judge or 0.0) / (n * r * j)


def advise(c: Components, d: Design) -> tuple[str | None, str | None, bool]:
    """Which of more samples, repeats or judge calls lowers the mean's variance most per dollar;
    which of repeats and judge calls does when there are no more samples to add; per dollar."""
    per_dollar = d.target_cost is not None and (d.judge_cost is not None or d.judge_items == 0)
    t = d.target_cost if per_dollar and d.target_cost else 1.0
    jc = d.judge_cost if per_dollar and d.judge_cost else 1.0
    n, r, j, k = d.samples, d.repeats, d.judge_calls, d.judge_items
    now = sum(mean_variance(c, n, r, j))
    run_cost = t + j * k * jc
    gains = {
        "samples": (now - sum(mean_variance(c, n + 1, r, j))) / (r * run_cost),
        "repeats": (now - sum(mean_variance(c, n, r + 1, j))) / (n * run_cost),
    }
    if c.judge is not None and k > 0:
        gains["judge_calls"] = (now - sum(mean_variance(c, n, r, j + 1))) / (n * r * k * jc)
    return _best(gains), _best({k: v for k, v in gains.items() if k != "samples"}), per_dollar


def _best(gains: Mapping[str, float]) -> str | None:
    best = max(gains, key=lambda key: gains[key], default=None)
    return best if best is not None and gains[best] > 0 else None


def variance_sources(groups: Mapping[str, list[float]], judge_noise: float | None, d: Design) -> VarianceSources | None:
    """`summary.variance`; None without repeats or judge repeats, or below 2 samples."""
    if d.repeats <= 1 and d.judge_calls <= 1:
        return None
    c = components(list(groups.values()), judge_noise, d.judge_calls)
    if c is None:
        return None
    terms = mean_variance(c, d.samples, d.repeats, d.judge_calls)
    total = sum(terms)
    shares = tuple((k, round(v / total, 4) if total else 0.0) for k, v in zip(("sample", "run", "judge"), terms, strict=True))
    advice, fixed, per_dollar = advise(c, d)
    return VarianceSources(
        d.samples, round(d.repeats), d.judge_calls, round(c.sample, 6), round(c.run, 6),
        None if c.judge is None else round(c.judge, 6), shares if c.judge is not None else shares[:2],
        d.target_cost, d.judge_cost, advice, per_dollar, fixed,
    )  # fmt: skip


# ---------------------------------------------------------------- a result's judge noise


def _item_noise(item: JudgeItem | None) -> tuple[float, int] | None:
    """(variance of one call, calls) of a judge item asked several times; an ensemble's item is
    the mean of its members, so its noise is theirs averaged and divided by their number."""
    if item is None:
        return None
    if item.judges:
        found = [x for m in item.judges if (x := _item_noise(m)) is not None]
        if not found:
            return None
        return fmean(v for v, _ in found) / len(item.judges), found[0][1]
    calls = [s for s in item.samples or () if s is not None]
    return (variance(calls), len(item.samples or ())) if len(calls) >= 2 else None


def block_noise(block: JudgeBlock | None, layers: int) -> tuple[float, int] | None:
    """One judge call's noise on a unit's composite, and the calls per item: the layer is read as
    the mean of its items (rubric and dimensions), the composite as the mean of `layers` layers."""
    if block is None or layers < 1:
        return None
    items = [block.rubric, *(d for _, d in block.dimensions)]
    found = [x for i in items if (x := _item_noise(i)) is not None]
    if not found:
        return None
    return fmean(v for v, _ in found) / len(found) / layers**2, max(j for _, j in found)


class JudgeNoise(msgspec.Struct, frozen=True, gc=False):
    """A result's judge work: items asked (rubric and dimensions, all turns), calls per item,
    what the judge cost, and one call's noise on its composite (None when asked once per item)."""

    items: int
    calls: int
    cost_usd: float | None
    noise: float | None


def judge_noise(r: SampleResult) -> JudgeNoise | None:
    """A result's judge work (omk.scoring.digest asks only when it has a judge block)."""
    units: list[SampleResult | TurnResult] = [t for t in r.turns if is_graded(t.scores)] if r.turns else [r]
    blocks = [(u.judge, sum(1 for layer in ("fact", "behavior", "judge") if getattr(u.scores, layer) is not None)) for u in units if u.judge is not None]
    if not blocks:
        return None
    noises = [x for b, m in blocks if (x := block_noise(b, m)) is not None]
    costs = [float(b.cost_usd) for b, _ in blocks if b.cost_usd is not None]
    items = sum((b.rubric is not None) + len(b.dimensions) for b, _ in blocks)
    noise = sum(v for v, _ in noises) / len(units) ** 2 if noises else None
    return JudgeNoise(items, max((j for _, j in noises), default=1), sum(costs) if costs else None, noise)
