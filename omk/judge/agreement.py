"""How far judges agree: pairwise mean absolute difference, and Pearson across samples.

Per sample, an ensemble only has one score per judge, so only the mean absolute difference (and
the spread) is defined there. Across the run, each pair of judges gives two aligned series (the
samples that every judge scored) and Pearson applies; it is null when a series is constant.
"""

from __future__ import annotations

import math
from itertools import combinations
from statistics import fmean, pstdev
from typing import Any


def pearson(a: list[float], b: list[float]) -> float | None:
    if len(a) != len(b) or len(a) < 2:
        return None
    ma, mb = fmean(a), fmean(b)
    num = sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True))
    da = sum((x - ma) ** 2 for x in a)
    db = sum((y - mb) ** 2 for y in b)
    if da == 0 or db == 0:
        return None
    return num / math.sqrt(da * db)


def mean_abs_diff(a: list[float], b: list[float]) -> float:
    return fmean(abs(x - y) for x, y in zip(a, b, strict=True)) if a else 0.0


def sample_agreement(scores: list[float]) -> dict[str, Any]:
    """Agreement of several judges on one item: mean |difference| over pairs, and the spread."""
    pairs = list(combinations(scores, 2))
    return {
        "mean_abs_diff": round(fmean(abs(x - y) for x, y in pairs), 3) if pairs else 0.0,
        "pair_count": len(pairs),
        "stddev": round(pstdev(scores), 3) if len(scores) >= 2 else 0.0,
    }


def run_agreement(judges: list[str], rows: list[list[float | None]]) -> dict[str, Any] | None:
    """Across samples: `rows[i][j]` is judge j's score on sample i (None when it failed).

    Only rows where every judge scored are used. Pearson and the mean absolute difference are
    computed per pair and averaged; each pair is listed too.
    """
    if len(judges) < 2:
        return None
    aligned = [scores for r in rows if len(scores := [float(v) for v in r if v is not None]) == len(r)]
    pairs: list[dict[str, Any]] = []
    pearsons: list[float] = []
    mads: list[float] = []
    for i, j in combinations(range(len(judges)), 2):
        a = [r[i] for r in aligned]
        b = [r[j] for r in aligned]
        p = pearson(a, b)
        mad = round(mean_abs_diff(a, b), 3) if aligned else None
        pearsons += [round(p, 3)] if p is not None else []
        mads += [mad] if mad is not None else []
        pairs.append({"judges": [judges[i], judges[j]], "mean_abs_diff": mad, "pearson": round(p, 3) if p is not None else None})
    return {
        "sample_count": len(aligned),
        "pair_count": len(pairs),
        "mean_abs_diff": round(fmean(mads), 3) if mads else None,
        "pearson": round(fmean(pearsons), 3) if pearsons else None,
        "pairs": pairs,
    }
