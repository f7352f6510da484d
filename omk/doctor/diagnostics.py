"""What is wrong with a sample set, or with the run it produced (omk 0.23's checks, docs/doctor.md).

Each check returns `Diagnostic`s. Severities weigh into the health score
`clamp(round(100 − 20·(8·errors + 3·warnings + 1·infos) / N), 0, 100)`. docs/doctor.md lists every
kind, its severity and its rule, including how the variant-based run rules of omk 0.23 were
adapted to repeats and judge ensembles.
"""

from __future__ import annotations

import math
import shlex
import shutil
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from statistics import pstdev
from typing import Any

from omk.core.errors import Problem
from omk.io.textsafe import plural
from omk.records import SampleResult, TurnResult
from omk.records.document import ReportDocument
from omk.samples.model import AssertionSpec, Sample, normalize_capability

SEVERITIES = ("error", "warning", "info", "advice")  # advice does not weigh on the health score

# thresholds (omk 0.23's defaults)
DUPLICATE_ROUGE = 0.7
DUPLICATE_MAX_SAMPLES = 500
AMBIGUOUS_STDDEV = 1.0
OUTLIER_K = 3.0
FLAT_SPREAD = 0.5
FLAT_MIN_SAMPLES = 5
THIN_MIN_SAMPLES = 10
RUBRIC_SHORT = 20

GRADE_KEYWORDS_ZH = (
    "优秀", "良好", "合格", "不合格", "及格", "满分", "零分", "扣分", "加分", "得分",
    "评分标准", "判分标准", "评分要点", "评分级别", "判定标准", "至少包含", "必须包含", "不应包含", "应当", "应识别",
)  # fmt: skip
GRADE_KEYWORDS_EN = (
    "excellent", "good", "poor", "fail", "pass", "rubric", "criterion", "criteria", "must include",
    "must contain", "should include", "should contain", "at least", "at most", "no more than",
    "scored as", "graded as", "full marks", "full score",
)  # fmt: skip


@dataclass(slots=True)
class Diagnostic:
    kind: str
    severity: str  # "error" | "warning" | "info" | "advice"
    sample_id: str | None  # None for a finding about the whole set or run
    message: str
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "sample_id": self.sample_id,
            "message": self.message,
            "detail": self.detail,
        }


def sort_diagnostics(diags: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diags, key=lambda d: (SEVERITIES.index(d.severity), d.sample_id or "", d.kind))


def health_score(diags: list[Diagnostic], n: int) -> int:
    if n <= 0:
        return 100
    c = Counter(d.severity for d in diags)
    penalty = 20 * (8 * c["error"] + 3 * c["warning"] + c["info"]) / n
    return max(0, min(100, math.floor(100 - penalty + 0.5)))


def walk(specs: Sequence[AssertionSpec]) -> Iterator[AssertionSpec]:
    for spec in specs:
        yield spec
        yield from walk(spec.children)


# ---------------------------------------------------------------- the sample set


def rubric_clarity_low(samples: list[Sample]) -> list[Diagnostic]:
    out = []
    for s in samples:
        written = [("rubric", s.rubric)] + [(f"turn {i + 1} rubric", t.rubric) for i, t in enumerate(s.turns)]
        for what, text in written:
            rubric = (text or "").strip()
            if not rubric or len(rubric) >= RUBRIC_SHORT:
                continue
            lower = rubric.lower()
            if any(k in rubric for k in GRADE_KEYWORDS_ZH) or any(k in lower for k in GRADE_KEYWORDS_EN):
                continue
            out.append(
                Diagnostic(
                    "rubric_clarity_low",
                    "info",
                    s.sample_id,
                    f"{what} is {len(rubric)} characters and names no grading criterion: {rubric!r}",
                    {"rubric": rubric},
                )
            )
    return out


def rouge1_recall(candidate: Counter[str], reference: Counter[str]) -> float:
    """ROUGE-1 recall of `candidate` against `reference`: clipped unigram overlap / reference length."""
    total = sum(reference.values())
    if not total:
        return 0.0
    overlap = sum(min(n, candidate[tok]) for tok, n in reference.items() if tok in candidate)
    return overlap / total


def near_duplicates(samples: list[Sample], threshold: float = DUPLICATE_ROUGE) -> list[Diagnostic]:
    """Pairs i < j whose prompts reach ROUGE-1 ≥ threshold (recall against prompt j); flagged on i."""
    if len(samples) > DUPLICATE_MAX_SAMPLES:
        return []
    from omk.assertions.tokenize import tokenize

    bags = [Counter(tokenize(s.prompt)) for s in samples]
    out = []
    for i, si in enumerate(samples):
        if not bags[i]:
            continue
        for j in range(i + 1, len(samples)):
            if not bags[j]:
                continue
            score = rouge1_recall(bags[i], bags[j])
            if score >= threshold:
                out.append(
                    Diagnostic(
                        "near_duplicate",
                        "warning",
                        si.sample_id,
                        f"prompt nearly duplicates {samples[j].sample_id!r} (ROUGE-1 {score:.2f})",
                        {"duplicate_of": samples[j].sample_id, "rouge1": round(score, 4)},
                    )
                )
    return out


def capability_thin(samples: list[Sample]) -> list[Diagnostic]:
    n = len(samples)
    if n < THIN_MIN_SAMPLES:
        return []
    limit = max(2, math.floor(0.2 * n))
    counts: Counter[str] = Counter()
    first: dict[str, tuple[str, str]] = {}
    for s in samples:
        for cap in dict.fromkeys(normalize_capability(c) for c in s.capability if c.strip()):
            counts[cap] += 1
            first.setdefault(cap, (s.sample_id, next(c for c in s.capability if normalize_capability(c) == cap)))
    return [
        Diagnostic(
            "capability_thin",
            "warning",
            first[cap][0],
            f"capability {first[cap][1]!r} has only {plural(count, 'sample', 'samples')} (thin at ≤ {limit} of {n})",
            {"capability": cap, "count": count, "limit": limit},
        )
        for cap, count in counts.items()
        if count <= limit
    ]


def ungraded(samples: list[Sample]) -> list[Diagnostic]:
    return [
        Diagnostic(
            "no_grading",
            "error",
            s.sample_id,
            "sample has no assertion, no rubric and no dimensions: it can never pass",
        )
        for s in samples
        if not s.is_graded
    ]


def mock_keys(mocks: Sequence[dict[str, Any]]) -> list[str]:
    """A mock's key, as omk 0.54 names it: `<tool>:<1-based ordinal among mocks with the same literal tool>`."""
    seen: Counter[str] = Counter()
    keys = []
    for m in mocks:
        tool = str(m.get("tool", ""))
        seen[tool] += 1
        keys.append(f"{tool}:{seen[tool]}")
    return keys


def mock_coverage(samples: list[Sample]) -> list[Diagnostic]:
    out = []
    for s in samples:
        keys = mock_keys(s.mocks)
        checked = {str(a.get("value")) for specs in s.assertion_lists() for a in walk(specs) if a.type == "mock_hit"}
        for key in keys:
            if key not in checked:
                out.append(
                    Diagnostic(
                        "mock_unchecked",
                        "info",
                        s.sample_id,
                        f"mock {key} is never checked by a mock_hit assertion",
                        {"mock": key},
                    )
                )
        for key in sorted(checked - set(keys)):
            out.append(
                Diagnostic(
                    "mock_hit_unknown",
                    "error",
                    s.sample_id,
                    f"mock_hit references missing mock {key!r}; available mock keys: {', '.join(keys) or '(none)'}",
                    {"mock": key},
                )
            )
    return out


def skill_controls(samples: list[Sample]) -> list[Diagnostic]:
    """A skill that samples expect to fire (`skill_used`) but none expects to stay quiet (`skill_used`
    with `not: true`, as a near-miss prompt is written): its recall proves nothing."""
    positive: Counter[str] = Counter()
    negative: Counter[str] = Counter()
    for s in samples:
        for specs in s.assertion_lists():
            for a in walk(specs):
                if a.type == "skill_used":
                    (negative if a.negate else positive)[str(a.get("value"))] += 1
    return [
        Diagnostic(
            "skill_no_negative_control",
            "warning",
            None,
            f"skill {name}: {plural(n, 'check', 'checks')} expect{'s' if n == 1 else ''} it to fire and none expects it to stay quiet; a description that "
            f"fires on everything scores perfect recall. Add near-miss prompts with "
            f"{{type: skill_used, value: {name}, not: true}}",
            {"skill": name, "should_fire": n, "must_not_fire": 0},
        )
        for name, n in sorted(positive.items())
        if not negative[name]
    ]


def sample_cwd(s: Sample) -> Path:
    return (s.base_dir / s.cwd).resolve() if s.cwd else s.base_dir


def environment(samples: list[Sample]) -> list[Diagnostic]:
    """`environment` prerequisites that do not hold on this machine (they only inform the prompt)."""
    out = []
    for s in samples:
        env = s.environment or {}
        for cli in env.get("cli_available") or []:
            name = str(cli).strip()
            if name and shutil.which(name) is None:
                out.append(
                    Diagnostic("env_cli_missing", "warning", s.sample_id, f"declared CLI {name!r} is not on PATH", {"cli": name})
                )
        cwd = sample_cwd(s)
        for f in env.get("files_available") or []:
            name = str(f).strip()
            if name and not (cwd / Path(name).expanduser()).exists():
                out.append(
                    Diagnostic(
                        "env_file_missing",
                        "warning",
                        s.sample_id,
                        f"declared file {name!r} does not exist under {cwd}",
                        {"file": name, "cwd": str(cwd)},
                    )
                )
    return out


def unknown_fields(warnings: list[Problem]) -> list[Diagnostic]:
    """One `unknown_field` warning per field name the loader ignored, with every place it is written."""
    by_name: dict[str, list[Problem]] = {}
    for w in warnings:
        name = w.field.rsplit(".", 1)[-1]
        by_name.setdefault(name, []).append(w)
    out = []
    for name, found in by_name.items():
        first = found[0]
        at = f"{first.file}:{first.line}" if first.line else first.file
        more = f" and {plural(len(found) - 1, 'more place', 'more places')}" if len(found) > 1 else ""
        out.append(
            Diagnostic(
                "unknown_field",
                "warning",
                None,
                f'unknown field "{name}" ignored, at {at} ({first.where}){more}; rename it "x-{name}" to keep it as a note, '
                f"or remove it (`omk eval {shlex.quote(first.file)} --strict` refuses it)",
                {"field": name, "places": [{"file": w.file, "line": w.line, "where": w.where, "field": w.field} for w in found]},
            )
        )
    return out


def sample_diagnostics(samples: list[Sample]) -> list[Diagnostic]:
    return [
        *ungraded(samples),
        *mock_coverage(samples),
        *skill_controls(samples),
        *environment(samples),
        *near_duplicates(samples),
        *capability_thin(samples),
        *rubric_clarity_low(samples),
    ]


# ---------------------------------------------------------------- a finished run (report.json)


def upper_median(values: list[float]) -> float | None:
    """The upper median, as omk 0.23 takes it: `sorted[floor(n/2)]` over the positive values."""
    pos = sorted(v for v in values if v > 0)
    return pos[len(pos) // 2] if pos else None


def _graded(r: SampleResult) -> float | None:
    """The composite of a result that ran and was graded (composite > 0), else None."""
    if r.status != "ok":
        return None
    c = r.scores.composite
    return c if c is not None and c > 0 else None


def judge_spreads(results: list[SampleResult]) -> list[float]:
    """Stddevs of judge scores for one sample: across ensemble members of each result, and across repeats."""
    spreads = []
    units: list[SampleResult | TurnResult] = [*results, *(t for r in results for t in r.turns)]
    for judge in (u.judge for u in units):  # a conversation: per turn
        if judge is None:
            continue
        if (stddev := judge.agreement_stddev) is not None:
            spreads.append(stddev)
        if len(scores := judge.member_scores) >= 2:
            spreads.append(pstdev(scores))
    repeat_scores = [j for r in results if r.status == "ok" and (j := r.scores.judge) is not None]
    if len(repeat_scores) >= 2:
        spreads.append(pstdev(repeat_scores))
    return spreads


def by_sample(results: Iterable[SampleResult]) -> Iterator[tuple[str, list[SampleResult]]]:
    """Each sample's results, in order of first appearance. A report lists a sample's repeats one
    after another, so they are grouped as they are read (one sample in memory at a time); a report
    that does not is grouped whole."""
    ids = [r.sample_id for r in results]
    adjacent = len({sid for sid, _ in groupby(ids)}) == sum(1 for _ in groupby(ids))
    if adjacent:
        for sid, group in groupby(results, key=lambda r: r.sample_id):
            yield sid, list(group)
        return
    grouped: dict[str, list[SampleResult]] = defaultdict(list)
    for r in results:
        grouped[r.sample_id].append(r)
    yield from grouped.items()


def run_diagnostics(report: ReportDocument) -> list[Diagnostic]:
    """What a finished run shows; its results may be read lazily (they are walked twice)."""
    out: list[Diagnostic] = []
    costs: dict[str, float] = {}
    latencies: dict[str, float] = {}
    graded: dict[str, list[float]] = {}
    for sid, results in by_sample(report.results):
        graded[sid] = [c for r in results if (c := _graded(r)) is not None]
        out += _sample_diagnostics(sid, results)
        ran = [r.trace for r in results if r.status == "ok"]
        cost = [t.cost_usd for t in ran if t.cost_usd is not None]
        lat = [t.latency_ms for t in ran if t.latency_ms is not None]
        if cost:
            costs[sid] = sum(cost) / len(cost)
        if lat:
            latencies[sid] = sum(lat) / len(lat)
    out += _outliers("cost_outlier", costs) + _outliers("latency_outlier", latencies)
    means = [sum(v) / len(v) for v in graded.values() if v]
    if len(means) >= FLAT_MIN_SAMPLES and max(means) - min(means) < FLAT_SPREAD:
        out.append(
            Diagnostic(
                "flat_scores",
                "warning",
                None,
                f"all {len(means)} graded samples scored between {min(means):.2f} and {max(means):.2f}: "
                "the set does not separate good answers from bad ones",
                {"min": min(means), "max": max(means), "samples": len(means)},
            )
        )
    return out


def _sample_diagnostics(sid: str, results: list[SampleResult]) -> list[Diagnostic]:
    """What the runs of one sample say about it: always 5, always 1, errors, a split judge."""
    out: list[Diagnostic] = []
    scores = [c for r in results if (c := _graded(r)) is not None]
    if len(scores) >= 2 and max(scores) == min(scores) == 5:
        out.append(Diagnostic("all_pass", "info", sid, f"scored 5 in all {len(scores)} repeats: too easy to tell targets apart"))
    elif len(scores) >= 2 and max(scores) == min(scores) == 1:
        out.append(Diagnostic("all_fail", "error", sid, f"scored 1 in all {len(scores)} repeats: check the sample, not only the target"))
    errors = [r for r in results if r.status == "error"]
    if errors:
        every = len(errors) == len(results)
        out.append(
            Diagnostic(
                "error_prone",
                "error" if every else "warning",
                sid,
                f"errored in {len(errors)} of {plural(len(results), 'run', 'runs')}: {errors[0].error or 'unknown error'}",
                {"errors": len(errors), "runs": len(results)},
            )
        )
    spreads = judge_spreads(results)
    if spreads and max(spreads) >= AMBIGUOUS_STDDEV:
        out.append(
            Diagnostic(
                "ambiguous_rubric",
                "warning",
                sid,
                f"judge scores disagree (stddev {max(spreads):.2f} ≥ {AMBIGUOUS_STDDEV:g}): make the rubric more specific",
                {"stddev": round(max(spreads), 4)},
            )
        )
    return out


def _outliers(kind: str, values: dict[str, float]) -> list[Diagnostic]:
    """Samples whose mean cost or latency is `OUTLIER_K` times the median or more."""
    median = upper_median(list(values.values()))
    if median is None:
        return []
    out = []
    for sid, v in values.items():
        if v >= OUTLIER_K * median:
            shown = f"${v:.4f} vs median ${median:.4f}" if kind == "cost_outlier" else f"{v:.0f} ms vs median {median:.0f} ms"
            out.append(
                Diagnostic(kind, "info", sid, f"{kind.split('_')[0]} {v / median:.1f}× the median ({shown})", {"value": v, "median": median})
            )
    return out
