"""Advice for a sample set, small ones included: findings that do not make the set wrong, so they
do not weigh on the health score (severity `advice`), but that a newcomer should hear before
reading a score.

* `small_set`: how large a regression the set can see at all. Two runs of N samples are told apart
  when enough samples flip the same way: with an exact two-sided sign test at p < 0.05 that takes
  at least `MIN_FLIPS` (6) flips, so a regression smaller than 6/N of the set cannot be told from
  noise; seeing a 10 % regression takes `ceil(6 / 0.10)` = 60 samples.
* `single_check`: a sample graded by one assertion and no rubric scores 1 or 5, nothing between.
* `layer_without_checks`: a layer (fact, behavior, judge) that no sample checks.
* `capability_single`: in a set under 10 samples (`capability_thin` covers larger ones), a
  capability with one sample: its pass rate is 0 % or 100 %.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from omk.doctor.diagnostics import THIN_MIN_SAMPLES, Diagnostic, normalize_capability
from omk.io.textsafe import plural
from omk.samples.model import AssertionSpec, Sample

ALPHA = 0.05  # the significance a comparison of two runs is read at
REGRESSION = 0.10  # the size of regression (a share of the samples) the advice names

# Each advice's text, filled from its `detail`: the terminal says it again in another language
# (`--lang zh`: `message(kind, detail, translate)`), the JSON keeps the English.
NO_REGRESSION = (
    "{samples}: no regression can be told from noise: that takes at least {min_flips} samples flipping "
    "the same way; seeing a {regression} regression takes about {needed} samples"
)
SOME_REGRESSION = (
    "{samples}: a regression is told from noise only when {min_flips} of them ({share} of the set) flip "
    "the same way; seeing a {regression} regression takes about {needed} samples"
)
SINGLE_CHECK = "one assertion and no rubric: the sample scores 1 or 5, nothing between; add a second check or a rubric"
NO_LAYER = "no sample checks the {layer}, {hint}: the composite says nothing about it"
LONE_CAPABILITY = "capability {name} has one sample: its pass rate can only be 0% or 100%"


def _same(text: str) -> str:
    return text


def _samples(n: int) -> str:
    return plural(n, "sample", "samples")


def message(
    kind: str, detail: dict[str, Any], translate: Callable[[str], str] = _same, count: Callable[[int], str] = _samples
) -> str:
    """The text of an advice `kind` from its `detail`: each template passed through `translate`,
    a number of samples written by `count`."""
    if kind == "small_set":
        n, flips = detail["samples"], detail["min_flips"]
        template = NO_REGRESSION if n < flips else SOME_REGRESSION
        return translate(template).format(
            samples=count(n), min_flips=flips, share=f"{flips / n:.0%}", regression=f"{REGRESSION:.0%}", needed=detail["samples_for_10pct"]
        )
    if kind == "single_check":
        return translate(SINGLE_CHECK)
    if kind == "layer_without_checks":
        layer = detail["layer"]
        return translate(NO_LAYER).format(layer=translate(f"{layer} layer"), hint=translate(LAYER_HINTS[layer]))
    if kind == "capability_single":
        return translate(LONE_CAPABILITY).format(name=repr(detail.get("name", detail["capability"])))
    raise KeyError(kind)


def min_flips(alpha: float = ALPHA) -> int:
    """The fewest samples that must flip the same way for an exact two-sided sign test to reach
    p < alpha (all k discordant pairs one way: p = 2 · 0.5^k)."""
    return math.floor(math.log2(2 / alpha)) + 1


def samples_needed(regression: float = REGRESSION, alpha: float = ALPHA) -> int:
    return math.ceil(min_flips(alpha) / regression - 1e-9)


def small_set(n: int) -> list[Diagnostic]:
    flips, needed = min_flips(), samples_needed()
    if n == 0 or n >= needed:
        return []
    detail = {"samples": n, "min_flips": flips, "smallest_regression": round(min(1.0, flips / n), 4), "samples_for_10pct": needed}
    return [Diagnostic("small_set", "advice", None, message("small_set", detail), detail)]


def _checks(specs: Sequence[AssertionSpec]) -> Iterator[AssertionSpec]:
    for spec in specs:
        if spec.children:
            yield from _checks(spec.children)
        else:
            yield spec


def single_check(samples: Sequence[Sample]) -> list[Diagnostic]:
    out = []
    for s in samples:
        judged = s.has_judge_work or any(t.rubric or t.dimensions for t in s.turns)
        if not judged and sum(1 for specs in s.assertion_lists() for _ in _checks(specs)) == 1:
            out.append(
                Diagnostic("single_check", "advice", s.sample_id, message("single_check", {}))
            )
    return out


LAYER_HINTS = {
    "fact": "what the answer says (contains, regex, json_schema …)",
    "behavior": "what the agent does (tool_called, mock_hit, tool_sequence …)",
    "judge": "a rubric or dimensions the judge scores",
}


def layers_without_checks(samples: Sequence[Sample]) -> list[Diagnostic]:
    from omk.assertions.evaluate import layer_of

    if not samples:
        return []
    seen = {layer_of(spec).value for s in samples for specs in s.assertion_lists() for spec in specs}
    if any(s.has_judge_work or any(t.rubric or t.dimensions for t in s.turns) for s in samples):
        seen.add("judge")
    return [
        Diagnostic("layer_without_checks", "advice", None, message("layer_without_checks", {"layer": layer}), {"layer": layer})
        for layer in LAYER_HINTS
        if layer not in seen
    ]


def capability_single(samples: Sequence[Sample]) -> list[Diagnostic]:
    if len(samples) >= THIN_MIN_SAMPLES:
        return []
    counts: Counter[str] = Counter()
    first: dict[str, tuple[str, str]] = {}
    for s in samples:
        for name in dict.fromkeys(c.strip() for c in s.capability if c.strip()):
            key = normalize_capability(name)
            counts[key] += 1
            first.setdefault(key, (s.sample_id, name))
    out = []
    for key, count in counts.items():
        if count == 1:
            detail = {"capability": key, "name": first[key][1]}  # grouped by `capability`, shown as first spelled
            out.append(Diagnostic("capability_single", "advice", first[key][0], message("capability_single", detail), detail))
    return out


def advice(samples: Sequence[Sample]) -> list[Diagnostic]:
    return [*small_set(len(samples)), *layers_without_checks(samples), *single_check(samples), *capability_single(samples)]
