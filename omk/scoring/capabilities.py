"""The run summary by capability (the sample's `capability:` list).

`summary.capabilities` in report.json is a list, one entry per capability in order of first
appearance, written only when some sample names one. Capabilities are grouped as the doctor's
coverage groups them (trimmed, lowercased, `-`, `_` and spaces dropped) and shown under the first
spelling seen; a sample that names several counts in each. Each entry counts the samples and
their results (runs under `--repeat`), passed, failed and errored, the pass rate with its Wilson
interval and the mean composite over the results that ran and were graded with its interval
(omk/scoring/intervals.py; none below 2 samples).

It reads only the results' digests, which the run keeps anyway: no result is held for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from omk.records import SampleResult
from omk.records.document import Capability
from omk.samples.model import normalize_capability
from omk.scoring.digest import Digest, digests
from omk.scoring.intervals import mean_interval, pass_rate_interval, per_sample
from omk.scoring.layers import round2
from omk.stats.bootstrap import Draws


def capability_breakdown(results: Sequence[SampleResult | Digest], draws: Draws | None = None) -> tuple[Capability, ...]:
    """Per capability, in order of first appearance; results (or their digests) in plan order.
    `draws` shares the bootstrap's draws with the rest of the summary."""
    names: dict[str, str] = {}
    groups: dict[str, list[Digest]] = {}
    spelled: dict[tuple[str, ...], list[tuple[str, str]]] = {}  # samples repeat a few lists of names
    for r in digests(results):
        pairs = spelled.get(r.capabilities)
        if pairs is None:
            pairs = spelled[r.capabilities] = _spelled(r.capabilities)
        for key, name in pairs:
            if key not in names:
                names[key], groups[key] = name, []
            groups[key].append(r)
    return tuple(_entry(names[key], members, draws) for key, members in groups.items())


def _spelled(capabilities: tuple[str, ...]) -> list[tuple[str, str]]:
    """(normalized key, spelling as first written) for each capability a sample names; one named
    twice is counted once, and a name that normalizes to nothing not at all."""
    found: dict[str, str] = {}
    for name in capabilities:
        found.setdefault(normalize_capability(name), name)
    return [(key, name) for key, name in found.items() if key]


def _entry(name: str, members: list[Digest], draws: Draws | None) -> Capability:
    passed = sum([r.passed for r in members])
    errored = len(members) - [r.status for r in members].count("ok")
    graded = [r for r in members if r.graded]
    composites = [r.scores.composite for r in graded]
    samples = len({r.sample_id for r in members})
    if samples == len(members):  # each result its sample's only run: its value as per_sample gives it
        values = [v + 0.0 for v in composites if v is not None]
    else:
        values = per_sample(graded, lambda r: r.scores.composite)
    return Capability(
        capability=name,
        samples=samples,
        total=len(members),
        passed=passed,
        failed=len(members) - passed,
        errored=errored,
        pass_rate=round(passed / len(members), 4),
        composite=round2(fmean(composites)) if graded else None,
        pass_rate_ci=pass_rate_interval(passed, len(members), samples),
        composite_ci=mean_interval(values, draws=draws),
    )
