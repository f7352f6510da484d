"""Why a result failed, in short lines: shared by the terminal, JUnit, Markdown and HTML reports.

Every function reads the typed report (omk/records/document.py), so a finished run can be
re-rendered from its report.json.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from omk.records.document import Summary
from omk.records.judging import JudgeBlock
from omk.records.result import AssertionResult, Scores, TurnResult, WorkspaceChanges
from omk.report.i18n import t
from omk.samples.model import JUDGE_OFF


class Graded(Protocol):
    """A result or a turn of a conversation: what failure_lines reads."""

    @property
    def status(self) -> str | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def assertions(self) -> Sequence[AssertionResult]: ...
    @property
    def judge(self) -> JudgeBlock | None: ...
    @property
    def scores(self) -> Scores: ...
    @property
    def turns(self) -> Sequence[TurnResult]: ...


class Named(Protocol):
    """A result, or a variant's result in an experiment: what names it in a table."""

    @property
    def sample_id(self) -> str | None: ...
    @property
    def repeat(self) -> int: ...


def label(a: AssertionResult) -> str:
    """`not contains "SQL"` — the assertion as a reader recognises it from the sample."""
    text = f"{'not ' if a.negate else ''}{a.type or '?'}"
    value = a.value
    if value is not None and a.type != "assert-set":
        shown = value if isinstance(value, str) else repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "…"
        text += f" {shown!r}" if isinstance(value, str) else f" {shown}"
    return text


def failed_assertions(assertions: Iterable[AssertionResult], depth: int = 0) -> list[str]:
    """One line per failed assertion, children of a failed set indented beneath it."""
    lines: list[str] = []
    for a in assertions:
        if a.status != "failed":
            continue
        msg = a.message or ""
        if a.negate and a.type != "assert-set" and not a.error:
            msg = f"{msg} (inverted by not)" if msg else "passed, so `not` fails it"
        if a.metric is not None and str(a.metric) not in msg:
            msg = f"{msg} [metric {a.metric}]" if msg else f"metric {a.metric}"
        lines.append(f"{'  ' * depth}{label(a)}: {msg}" if msg else f"{'  ' * depth}{label(a)}")
        if a.children and not a.negate:
            lines.extend(failed_assertions(a.children, depth + 1))
    return lines


def size_text(size: int) -> str:
    """`812 B`, `4.2 KB`, `1.3 MB`."""
    if size < 1024:
        return f"{size} B"
    return f"{size / 1024:.1f} KB" if size < 1024 * 1024 else f"{size / (1024 * 1024):.1f} MB"


def workspace_line(changes: WorkspaceChanges | None, shown: int = 8, lang: str = "en") -> str | None:
    """`workspace: created notes.md (23 B); changed src/app.py (40 B); deleted stale.txt (3 B)`,
    or None when the agent worked in no folder."""
    if changes is None:
        return None
    if not changes:
        return t("workspace: no file created, changed or deleted", lang)
    found = changes.all()
    parts = [f"{t(kind, lang, 'workspace')} {c.path} ({size_text(c.size)})" for kind, c in found[:shown]]
    more = t("; and {n} more", lang).format(n=len(found) - shown) if len(found) > shown else ""
    return f"{t('workspace', lang)}: " + "; ".join(parts) + more


def judge_reasons(judge: JudgeBlock | None) -> list[str]:
    items = judge.items() if judge is not None else []
    return [f"judge {what} {score}/5: {reason}" if reason else f"judge {what} {score}/5" for what, score, reason in items]


def failure_lines(result: Graded, threshold: float | None) -> list[str]:
    """Everything that explains a failed or errored result (or turn), most useful first."""
    if result.turns:
        return _conversation_lines(result, threshold)
    if result.status == "error":
        return [f"error: {result.error or 'unknown error'}"]
    lines = failed_assertions(result.assertions)
    scores = result.scores
    if scores.judge is not None and (threshold is None or scores.judge < threshold or not lines):
        lines.extend(judge_reasons(result.judge))
    layers = [("fact", scores.fact), ("behavior", scores.behavior), ("judge", scores.judge)]
    if threshold is not None:
        low = [f"{k} {v:.2f}" for k, v in layers if v is not None and v < threshold]
        if low:
            lines.insert(0, f"below threshold {threshold:g}: {', '.join(low)}")
    if not lines and all(v is None for _, v in layers):
        lines.append("nothing was graded (no assertion ran and no judge score)")
    return lines


def _conversation_lines(result: Graded, threshold: float | None) -> list[str]:
    """A conversation's reasons, turn by turn: `turn 2: contains "x": …`."""
    lines: list[str] = []
    for turn in result.turns:
        n = turn.index + 1
        if turn.status == "error":
            lines.append(f"turn {n}: error: {turn.error or 'unknown error'}")
        elif turn.status == "ok" and turn.passed is False:
            lines += [f"turn {n}: {line}" for line in failure_lines(turn, threshold)]
    if result.status == "error" and not lines:
        lines.append(f"error: {result.error or 'unknown error'}")
    if not lines and not any(t.passed is not None for t in result.turns):
        lines.append("nothing was graded (no turn had an assertion that ran or a judge score)")
    return lines


def passed_but_failed(result: Graded) -> list[str]:
    """The failed assertions of a result that passed overall (every turn's, in a conversation)."""
    if not result.turns:
        return failed_assertions(result.assertions)
    return [f"turn {t.index + 1}: {line}" for t in result.turns for line in failed_assertions(t.assertions)]


def turn_label(turn: TurnResult, width: int = 48, lang: str = "en") -> str:
    """`turn 2: Where is my order…` — a turn as a row of a table names it: what the user said,
    without the environment block before it or the fenced context after it."""
    from omk.domain.compose import said_by_user
    from omk.report.i18n import t

    prompt = " ".join(said_by_user(turn.prompt or "").split())
    if len(prompt) > width:
        prompt = prompt[: width - 1] + "…"
    return f"{t('turn {n}', lang).format(n=turn.index + 1)}: {prompt}"


def is_repeated(results: Iterable[Named]) -> bool:
    """Whether the run repeated samples (`--repeat N`): some result has a repeat index above 0."""
    return any(r.repeat > 0 for r in results)


def result_name(result: Named, repeated: bool) -> str:
    """`sample_id`, or `sample_id#r` (the 0-based repeat index) when the run repeated samples."""
    return f"{result.sample_id}#{result.repeat}" if repeated else str(result.sample_id)


def cached_line(summary: Summary, lang: str = "en") -> str | None:
    """`12 of 14 from the cache; --no-cache to call again` when any answer of the run came from
    the response cache (the target was not called for it), else None."""
    from omk.report.i18n import t

    if not summary.cached:
        return None
    return t("{cached} of {total} from the cache; --no-cache to call again", lang).format(cached=summary.cached, total=summary.total)


def skipped_judge_line(summary: Summary, lang: str = "en") -> str | None:
    """`N judge items skipped: <why>`, None when none were; reports without a reason (older
    runs) say no judge was configured."""
    from omk.report.i18n import counted, t

    n = summary.skipped_judge_items
    if not n:
        return None
    items = counted(n, "judge item", "judge items", lang)
    if summary.skipped_judge_reason == JUDGE_OFF:
        return t("{items} skipped: judge turned off (--no-judge)", lang).format(items=items)
    return t("{items} skipped: no judge configured (use --judge)", lang).format(items=items)
