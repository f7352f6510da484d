"""Samples drafted by a model from a skill (`omk sample SKILL_DIR --target SPEC`).

The model is asked, in calls of at most `BATCH` drafts each and at most `concurrency` calls at
once, for three kinds of samples: prompts that should make an agent use the skill (each with
`skill_used`), near-miss prompts that should not (`skill_used` with `not: true`), and task samples
(a prompt, mocks, a rubric and deterministic checks). Each draft is made into a sample and checked
as a samples file is (omk.authoring.draft_check). A reply with no JSON, or a draft that fails a
check, is sent back once with the located errors; what is still broken is dropped, with the
reason. Then near-duplicates (of each other, and of the samples of the file appended to) are
dropped, ids are given (`trigger-N`, `near-miss-N`, `task-N`, skipping ids already taken), and each
sample is written as YAML after a comment naming the model and the skill files it was drafted
from. A call that fails (a timeout, an HTTP error) is one line in `failures`; the others go on.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgspec

from omk.authoring.draft_check import Deduper, DraftError, block_of, checked, parse_reply, sample_of
from omk.authoring.draft_prompts import (
    KINDS,
    NEAR_MISS,
    TASK,
    TRIGGER,
    draft_request,
    language_hint,
    repair_request,
)
from omk.authoring.skill_source import SkillSource
from omk.core.errors import InputError
from omk.loader.depth import nested_too_deep
from omk.report.i18n import t
from omk.samples.model import Sample

BATCH = 5  # drafts asked for in one call
DEFAULT_TOTAL = 10
EXCERPT = 2000  # characters of a reply with no JSON sent back with the repair request


class Asker(Protocol):
    """A model that answers a prompt with text (omk.authoring.asker wraps a target)."""

    async def ask(self, prompt: str) -> str: ...


class Counts(msgspec.Struct, frozen=True, gc=False):
    """How many drafts of each kind are asked for."""

    should_fire: int
    near_misses: int
    tasks: int

    @property
    def total(self) -> int:
        return self.should_fire + self.near_misses + self.tasks

    def of(self, kind: str) -> int:
        return {TRIGGER: self.should_fire, NEAR_MISS: self.near_misses, TASK: self.tasks}[kind]


def split_counts(total: int | None, triggers: int | None, tasks: int | None) -> Counts:
    """`-n` split evenly between trigger probes and tasks unless `--triggers` / `--tasks` say;
    the trigger probes split again between should-fire (the larger half) and near-miss."""
    if triggers is not None and tasks is not None:
        if total is not None and total != triggers + tasks:
            raise InputError(f"-n {total} is not --triggers {triggers} + --tasks {tasks}; give two of the three")
    else:
        n = DEFAULT_TOTAL if total is None else total
        if triggers is None and tasks is None:
            triggers = (n + 1) // 2
        if triggers is None:
            assert tasks is not None
            triggers = n - tasks
        if tasks is None:
            tasks = n - triggers
        if triggers < 0 or tasks < 0:
            raise InputError(f"-n {n} is fewer than --triggers/--tasks ask for")
    if triggers + tasks < 1:
        raise InputError("nothing to draft: -n, --triggers and --tasks ask for no sample")
    return Counts((triggers + 1) // 2, triggers // 2, tasks)


@dataclass(slots=True)
class Draft:
    """One checked draft: its kind, the sample (as data and as loaded), in the order asked."""

    kind: str
    order: tuple[int, int]  # (call, item): the order drafts are written in
    data: dict[str, Any]
    sample: Sample
    repaired: bool = False


@dataclass(slots=True)
class Drafted:
    """What drafting gave: the blocks to write (YAML list items), the samples, and what was
    dropped or failed (one line each, for stderr)."""

    blocks: list[str] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    repaired: int = 0

    @property
    def count(self) -> int:
        return len(self.blocks)


@dataclass(slots=True)
class DraftJob:
    """Everything one drafting needs besides the model."""

    skill: SkillSource
    counts: Counts
    spec: str  # the model's target spec as named in each sample's comment: `public_spec`, its secrets masked
    base_dir: Path  # where the samples will be written: mock files would resolve there
    existing: list[Sample] = field(default_factory=list)  # the file appended to
    concurrency: int = 4
    indent: int = 2
    lang: str = "en"  # the language of the lines for stderr (`--lang zh`)


def _calls(counts: Counts) -> list[tuple[str, int]]:
    """(kind, drafts asked) per call, in kind order."""
    calls = []
    for kind in KINDS:
        left = counts.of(kind)
        while left > 0:
            calls.append((kind, min(BATCH, left)))
            left -= BATCH
    return calls


async def draft_samples(job: DraftJob, asker: Asker) -> Drafted:
    """Ask, check, repair, dedupe and write: the samples drafted for `job`."""
    out = Drafted()
    gate = asyncio.Semaphore(job.concurrency)
    calls = _calls(job.counts)
    found = await asyncio.gather(*(_one_call(job, asker, gate, index, kind, n, out) for index, (kind, n) in enumerate(calls)))
    drafts = sorted((d for batch in found for d in batch), key=lambda d: d.order)
    _write(job, drafts, out)
    return out


async def _ask(asker: Asker, gate: asyncio.Semaphore, prompt: str) -> str:
    async with gate:
        return await asker.ask(prompt)


def kind_name(kind: str, lang: str) -> str:
    """`trigger`, `near-miss`, `task` as the lines for stderr say them."""
    return t(kind, lang, context="draft")


def _failure(kind: str, exc: BaseException, lang: str) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return t("{kind} drafts: the model gave no answer: {reason}", lang).format(kind=kind_name(kind, lang), reason=text)


async def _one_call(job: DraftJob, asker: Asker, gate: asyncio.Semaphore, index: int, kind: str, n: int, out: Drafted) -> list[Draft]:
    """The checked drafts of one call (repairs included); failures and drops recorded in `out`."""
    hint = language_hint(job.skill)
    try:
        reply = await _ask(asker, gate, draft_request(job.skill, kind, n, hint))
        try:
            items = parse_reply(reply)
        except DraftError as exc:  # no usable JSON at all: asked again once, for the whole batch
            excerpt = reply.strip()[:EXCERPT] or "(an empty reply)"
            items = parse_reply(await _ask(asker, gate, repair_request(job.skill, kind, excerpt, exc.lines, n)))
    except DraftError as exc:
        errors = "; ".join(exc.lines)
        out.dropped.append(t("{n} {kind} drafts: {errors}, again after the repair request", job.lang).format(n=n, kind=kind_name(kind, job.lang), errors=errors))
        return []
    except Exception as exc:  # noqa: BLE001 - a failing model ends this call, never the command
        out.failures.append(_failure(kind, exc, job.lang))
        return []
    if len(items) > n:
        items = items[:n]
    results = await asyncio.gather(*(_one_draft(job, asker, gate, kind, (index, i), item, out) for i, item in enumerate(items)))
    return [d for d in results if d is not None]


async def _one_draft(job: DraftJob, asker: Asker, gate: asyncio.Semaphore, kind: str, order: tuple[int, int], item: Any, out: Drafted) -> Draft | None:
    """One draft checked, repaired once when broken, else dropped with the reason."""
    name = f"draft {kind}-{order[0] + 1}.{order[1] + 1}"
    provisional = f"{kind}-draft"
    try:
        return _draft(job, kind, order, item, name, provisional)
    except DraftError as exc:
        errors, shown = exc.lines, _shown(job, kind, item, provisional)
    try:
        fixed = parse_reply(await _ask(asker, gate, repair_request(job.skill, kind, shown, errors, 1)))
        if not fixed:
            raise DraftError(["the repair reply holds no draft"])
        draft = _draft(job, kind, order, fixed[0], name, provisional)
    except DraftError as exc:
        out.dropped.append(t("{errors} (still broken after one repair request)", job.lang).format(errors="; ".join(exc.lines)))
        return None
    except Exception as exc:  # noqa: BLE001 - a failing model drops this draft, never the command
        reason = " ".join(str(exc).split())
        out.dropped.append(t("{errors} (the repair request failed: {reason})", job.lang).format(errors="; ".join(errors), reason=reason))
        return None
    draft.repaired = True
    return draft


def _draft(job: DraftJob, kind: str, order: tuple[int, int], item: Any, name: str, sample_id: str) -> Draft:
    try:
        data = sample_of(kind, item, job.skill.name, sample_id)
    except DraftError as exc:
        raise DraftError([f"{name}: {line}" for line in exc.lines]) from None
    sample, _ = checked(kind, data, name, job.base_dir)
    return Draft(kind, order, data, sample)


def _shown(job: DraftJob, kind: str, item: Any, sample_id: str) -> str:
    """The broken draft as it is sent back: the YAML omk wrote for it (the lines the errors name)
    when it could make a sample of it, else the model's JSON."""
    if nested_too_deep(item) is not None:  # the writers recurse: shown as the model wrote it, cut short
        try:
            return json.dumps(item, ensure_ascii=False, default=str)[:EXCERPT]
        except RecursionError:
            return "(a draft nested too deeply to show)"
    try:
        data = sample_of(kind, item, job.skill.name, sample_id)
    except DraftError:
        return json.dumps(item, ensure_ascii=False, indent=2, default=str)
    text = "samples:\n" + block_of(data, "draft") + "\n"
    return "\n".join(f"{n:>3} | {line}" for n, line in enumerate(text.split("\n")[:-1], 1))


ID_PREFIX = {TRIGGER: "trigger", NEAR_MISS: "near-miss", TASK: "task"}


def _write(job: DraftJob, drafts: list[Draft], out: Drafted) -> None:
    """Drop near-duplicates, give ids, and make each draft's YAML block."""
    dedupe = Deduper.of(job.existing)
    taken = {s.sample_id for s in job.existing}
    numbers = dict.fromkeys(KINDS, 0)
    for draft in drafts:
        like = dedupe.duplicate_of(draft.sample.prompt)
        if like is not None:
            line = t("a {kind} draft: its prompt nearly duplicates {like}: {prompt}", job.lang)
            out.dropped.append(line.format(kind=kind_name(draft.kind, job.lang), like=repr(like), prompt=_excerpt(draft.sample.prompt)))
            continue
        sample_id = _next_id(ID_PREFIX[draft.kind], numbers, draft.kind, taken)
        data = {**draft.data, "sample_id": sample_id}
        dedupe.keep(sample_id, draft.sample.prompt)
        out.repaired += draft.repaired
        out.samples.append(data)
        out.blocks.append(block_of(data, comment_for(job, draft), job.indent))


def _next_id(prefix: str, numbers: dict[str, int], kind: str, taken: set[str]) -> str:
    while True:
        numbers[kind] += 1
        sample_id = f"{prefix}-{numbers[kind]}"
        if sample_id not in taken:
            taken.add(sample_id)
            return sample_id


def _excerpt(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return repr(line if len(line) <= limit else line[: limit - 1] + "…")


WHAT = {
    TRIGGER: "a prompt that should fire the skill",
    NEAR_MISS: "a near-miss prompt that should not fire the skill",
    TASK: "a task sample",
}


def comment_for(job: DraftJob, draft: Draft) -> str:
    """The line above a drafted sample: what it is, that a model drafted it (the spec named, its
    secrets masked) and from which files of the skill, and that a person reviews it."""
    files = _names(f"{job.skill.name}/{p}" for p in job.skill.file_names())
    fixed = ", repaired once after omk's checks" if draft.repaired else ""
    return f"drafted by {job.spec} from {files}{fixed}: {WHAT[draft.kind]}; review it before trusting it"


def _names(paths: Iterable[str], shown: int = 4) -> str:
    names = list(paths)
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more {'file' if more == 1 else 'files'}" if more > 0 else "")


USERINFO = re.compile(r"(?<=//)[^/@\s]*@")


def public_spec(spec: str, mask: Callable[[str], str]) -> str:
    """The target spec as written in a file: no `user:password@` in a URL, the run's secrets
    masked (`mask`: the masker `omk eval` would build, omk.yaml's `api_key_env` included)."""
    return mask(USERINFO.sub("", spec))
