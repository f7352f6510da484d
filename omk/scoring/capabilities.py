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
    keys: dict[str, str] = {}  # each spelling normalized once: samples repeat a few names
    for r in digests(results):
        spelled: dict[str, str] = {}
        for name in r.capabilities:  # named twice by one sample: counted once
            key = keys.get(name)
            if key is None:
                key = keys[name] = normalize_capability(name)
            spelled.setdefault(key, name)
        for key, name in spelled.items():
            if key:
                names.setdefault(key, name)
                groups.setdefault(key, []).append(r)
    return tuple(_entry(names[key], members, draws) for key, members in groups.items())


def _entry(name: str, members: list[Digest], draws: Draws | None) -> Capability:
    passed = sum(1 for r in members if r.passed)
    errored = sum(1 for r in members if r.status != "ok")
    graded = [r for r in members if r.graded]
    samples = len({r.sample_id for r in members})
    return Capability(
        capability=name,
        samples=samples,
        total=len(members),
        passed=passed,
        failed=len(members) - passed,
        errored=errored,
        pass_rate=round(passed / len(members), 4),
        composite=round2(fmean(r.scores.composite for r in graded)) if graded else None,
        pass_rate_ci=pass_rate_interval(passed, len(members), samples),
        composite_ci=mean_interval(per_sample(graded, lambda r: r.scores.composite), draws=draws),
    )
