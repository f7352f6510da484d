"""`omk observe` as plain text for the terminal (no Markdown, no markup): per skill, how often it
fired with its Wilson interval, where, what failed after it fired, and the ranked candidates."""

from __future__ import annotations

from pathlib import PurePath

from omk.records.observe import Candidate, Observation, SkillObservation
from omk.records.triggering import Rate
from omk.report.i18n import counted, t

SHOWN_CHARS = 120  # of a prompt or a description on the terminal
HOW_NAMES = {"skill_call": "Skill call", "skill_md_read": "SKILL.md read", "codex_injection": "$skill in the prompt"}


def _cut(text: str, limit: int = SHOWN_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def session_label(path: str) -> str:
    """A session file as the terminal names it (--json has the whole path): a Codex rollout by its
    date and time, a Claude Code session by the start of its id."""
    stem = PurePath(path).stem
    if stem.startswith("rollout-") and len(stem) > 27:
        return stem[:27]
    return stem[:8] if len(stem) > 12 else stem


def rate_line(r: Rate) -> str:
    """`4/13 31% [13%, 58%]`, or `0/0` when the skill was never available."""
    if not r.n or r.value is None:
        return f"{r.k}/{r.n}"
    interval = f" [{r.low:.0%}, {r.high:.0%}]" if r.low is not None and r.high is not None else ""
    return f"{r.k}/{r.n} {r.value:.0%}{interval}"


def _where(c: Candidate, lang: str) -> str:
    w = c.where
    project = f" ({w.project})" if w.project else ""
    return f"{session_label(w.session)} {t('request', lang)} {w.index + 1}{project}"


def _similarities(c: Candidate, lang: str) -> str:
    """`similarity to the description 0.21, to the nearest request that fired it 0.22 (blog-1.jsonl request 1)`."""
    text = f"{t('similarity to the description', lang)} {c.description_similarity:.2f}"
    if not c.nearest_request:
        return text
    session, _, index = c.nearest_request.rpartition("#")
    target = f"{session_label(session)} {t('request', lang)} {int(index) + 1}" if index.isdigit() else c.nearest_request
    return f"{text}, {t('to the nearest request that fired it', lang)} {c.request_similarity:.2f} ({target})"


def _candidates(title: str, found: tuple[Candidate, ...], lang: str) -> list[str]:
    if not found:
        return []
    lines = [f"  {t(title, lang)}:"]
    for c in found:
        also = f"; {t('fired instead', lang)}: {', '.join(c.fired_instead)}" if c.fired_instead else ""
        lines.append(f"    {c.score:.2f}  {_where(c, lang)}: {_cut(c.prompt)!r}")
        lines.append(f"          {_similarities(c, lang)}{also}")
    return lines


def skill_lines(s: SkillObservation, lang: str = "en") -> list[str]:
    """One skill's block."""
    head = f"{s.skill}: {t('fired in', lang)} {rate_line(s.firing)} {t('of the requests where it was installed', lang)}"
    lines = [head]
    lines.append(f"  {t('description', lang)}: {_cut(s.description) if s.description else t('(no SKILL.md found)', lang)}")
    if s.how or s.subagent_firings:
        how = [f"{t(HOW_NAMES.get(name, name), lang)} {n}" for name, n in s.how]
        if s.subagent_firings:
            how.append(f"{t('in subagents', lang)} {s.subagent_firings}")
        lines.append(f"  {t('seen as', lang)}: {', '.join(how)}")
    if s.projects:
        lines.append(f"  {t('projects', lang)}: " + " · ".join(f"{p.project or '?'} {rate_line(p.firing)}" for p in s.projects))
    if s.calls_after:
        after = f"{counted(s.calls_after, 'tool call', 'tool calls', lang)}, {s.failed_after} {t('failed', lang, 'tool')}, {s.denied_after} {t('denied', lang)}"
        lines.append(f"  {t('requests with a failed or denied call after it fired', lang)}: {rate_line(s.troubled)}")
        lines.append(f"  {t('after it fired', lang)}: {after}")
        for p in s.problems:
            where = f"{session_label(p.where.session)} {t('request', lang)} {p.where.index + 1}"
            lines.append(f"    {t(p.kind, lang, 'tool')} {p.tool} ({where}): {_cut(p.output, 80)!r}")
    lines += _candidates("candidate missed triggers (did not fire; text close to it), most likely first", s.missed, lang)
    lines += _candidates("candidate false triggers (fired; text far from it), most likely first", s.false_triggers, lang)
    return lines


def observation_lines(o: Observation, lang: str = "en") -> list[str]:
    """The whole report, one line a string."""
    subagents = f" (+{o.subagent_sessions} {t('subagent', lang)})" if o.subagent_sessions else ""
    since = f"; {t('since', lang)} {o.since}" if o.since else ""
    head = f"{counted(o.sessions, 'session', 'sessions', lang)}{subagents}, {counted(o.requests, 'request', 'requests', lang)}"
    lines = [f"omk observe: {head}{since}"]
    if o.skipped_records:
        lines.append(f"{t('records of unknown types skipped', lang)}: {o.skipped_records}")
    lines.append(t("Rates are requests that fired the skill, with 95% Wilson intervals; candidates are ranked by text similarity (docs/skills.md).", lang))
    if o.not_found:
        lines.append(f"{t('Listed by the sessions, never fired, no SKILL.md found here (the CLI’s own skills, or removed ones)', lang)}: {', '.join(o.not_found)}")
    if not o.skills:
        lines.append(t("No skill is installed or fired in these sessions; name skill folders with --skills DIR.", lang))
    for s in o.skills:
        lines += ["", *skill_lines(s, lang)]
    return lines
