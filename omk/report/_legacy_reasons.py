"""Why a result failed, in short lines: shared by the JUnit, Markdown and HTML reports.

Every function reads the `report.json` shape (dicts), so a finished run can be re-rendered.
"""

from __future__ import annotations

from typing import Any

from omk.model import JUDGE_OFF


def label(a: dict[str, Any]) -> str:
    """`not contains "SQL"` — the assertion as a reader recognises it from the sample."""
    text = f"{'not ' if a.get('not') else ''}{a.get('type', '?')}"
    value = a.get("value")
    if value is not None and a.get("type") != "assert-set":
        shown = value if isinstance(value, str) else repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "…"
        text += f" {shown!r}" if isinstance(value, str) else f" {shown}"
    return text


def failed_assertions(assertions: list[dict[str, Any]], depth: int = 0) -> list[str]:
    """One line per failed assertion, children of a failed set indented beneath it."""
    lines: list[str] = []
    for a in assertions:
        if a.get("status") != "failed":
            continue
        msg = a.get("message") or ""
        if a.get("not") and a.get("type") != "assert-set" and not a.get("error"):
            msg = f"{msg} (inverted by not)" if msg else "passed, so `not` fails it"
        metric = a.get("metric")
        if metric is not None and str(metric) not in msg:
            msg = f"{msg} [metric {metric}]" if msg else f"metric {metric}"
        lines.append(f"{'  ' * depth}{label(a)}: {msg}" if msg else f"{'  ' * depth}{label(a)}")
        if a.get("children") and not a.get("not"):
            lines.extend(failed_assertions(a["children"], depth + 1))
    return lines


def judge_items(judge: dict[str, Any] | None) -> list[tuple[str, Any, str]]:
    """(what, score, reason) for the rubric and each dimension of a judge block."""
    if not isinstance(judge, dict):
        return []
    items: list[tuple[str, Any, str]] = []
    rubric = judge.get("rubric")
    if isinstance(rubric, dict):
        items.append(("rubric", rubric.get("score"), str(rubric.get("reason") or "")))
    dims = judge.get("dimensions")
    if isinstance(dims, dict):
        for name, d in dims.items():
            if isinstance(d, dict):
                items.append((f"dimension {name}", d.get("score"), str(d.get("reason") or "")))
    return items


def judge_reasons(judge: dict[str, Any] | None) -> list[str]:
    return [f"judge {what} {score}/5: {reason}" if reason else f"judge {what} {score}/5" for what, score, reason in judge_items(judge)]


def failure_lines(result: dict[str, Any], threshold: float | None) -> list[str]:
    """Everything that explains a failed or errored result, most useful first."""
    if result.get("turns"):
        return _conversation_lines(result, threshold)
    if result.get("status") == "error":
        return [f"error: {result.get('error') or 'unknown error'}"]
    lines = failed_assertions(result.get("assertions") or [])
    scores = result.get("scores") or {}
    judge_score = scores.get("judge")
    if judge_score is not None and (threshold is None or judge_score < threshold or not lines):
        lines.extend(judge_reasons(result.get("judge")))
    if threshold is not None:
        low = [f"{k} {v:.2f}" for k in ("fact", "behavior", "judge") if (v := scores.get(k)) is not None and v < threshold]
        if low:
            lines.insert(0, f"below threshold {threshold:g}: {', '.join(low)}")
    if not lines and not any(scores.get(k) is not None for k in ("fact", "behavior", "judge")):
        lines.append("nothing was graded (no assertion ran and no judge score)")
    return lines


def _conversation_lines(result: dict[str, Any], threshold: float | None) -> list[str]:
    """A conversation's reasons, turn by turn: `turn 2: contains "x": …`."""
    lines: list[str] = []
    for turn in result["turns"]:
        n = (turn.get("index") or 0) + 1
        if turn.get("status") == "error":
            lines.append(f"turn {n}: error: {turn.get('error') or 'unknown error'}")
        elif turn.get("status") == "ok" and turn.get("passed") is False:
            lines += [f"turn {n}: {line}" for line in failure_lines(turn, threshold)]
    if result.get("status") == "error" and not lines:
        lines.append(f"error: {result.get('error') or 'unknown error'}")
    if not lines and not any(t.get("passed") is not None for t in result["turns"]):
        lines.append("nothing was graded (no turn had an assertion that ran or a judge score)")
    return lines


def passed_but_failed(result: dict[str, Any]) -> list[str]:
    """The failed assertions of a result that passed overall (every turn's, in a conversation)."""
    if not result.get("turns"):
        return failed_assertions(result.get("assertions") or [])
    return [
        f"turn {(t.get('index') or 0) + 1}: {line}" for t in result["turns"] for line in failed_assertions(t.get("assertions") or [])
    ]


def turn_label(turn: dict[str, Any], width: int = 48, lang: str = "en") -> str:
    """`turn 2: Where is my order…` — a turn as a row of a table names it: what the user said,
    without the environment block before it or the fenced context after it."""
    from omk.targets.prompt import SEPARATOR

    said = str(turn.get("prompt") or "")
    said = said.split(SEPARATOR, 1)[1] if said.startswith("## ") and SEPARATOR in said else said
    prompt = " ".join(said.split("\n\n```\n", 1)[0].split())
    if len(prompt) > width:
        prompt = prompt[: width - 1] + "…"
    from omk.report.i18n import t

    return f"{t('turn {n}', lang).format(n=(turn.get('index') or 0) + 1)}: {prompt}"


def is_repeated(results: list[dict[str, Any]]) -> bool:
    """Whether the run repeated samples (`--repeat N`): some result has a repeat index above 0."""
    return any((r.get("repeat") or 0) > 0 for r in results)


def result_name(result: dict[str, Any], repeated: bool) -> str:
    """`sample_id`, or `sample_id#r` (the 0-based repeat index) when the run repeated samples."""
    repeat = result.get("repeat")
    return f"{result['sample_id']}#{repeat}" if repeated and repeat is not None else str(result["sample_id"])


def repeats_line(report: dict[str, Any]) -> str | None:
    """One sentence on the `--repeat` spread, when the run repeated samples."""
    rep = report.get("repeats")
    if not isinstance(rep, dict):
        return None
    return (
        f"{rep.get('n')} runs per sample: {rep.get('always_passed')} of {rep.get('samples')} samples passed every run, "
        f"{rep.get('flaky')} flaky, {rep.get('never_passed')} never passed"
    )


def skipped_judge_line(summary: dict[str, Any], lang: str = "en") -> str | None:
    """`N judge item(s) skipped: <why>`, None when none were; reports without a reason (older
    runs) say no judge was configured."""
    from omk.report.i18n import t

    n = summary.get("skipped_judge_items")
    if not n:
        return None
    if summary.get("skipped_judge_reason") == JUDGE_OFF:
        return t("{n} judge item(s) skipped: judge turned off (--no-judge)", lang).format(n=n)
    return t("{n} judge item(s) skipped: no judge configured (use --judge)", lang).format(n=n)
