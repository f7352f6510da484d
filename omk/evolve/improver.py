"""The improver's request and its answer.

Each round the improver (any target that answers text: `openai:`, `anthropic:`, `cmd:`) gets one
request: the focus, the current SKILL.md, what went wrong on the train samples (their prompts,
outputs, failed checks with their messages, judge reasons, missed and false triggers), and the
candidates rejected so far with why. It answers with K complete SKILL.md files, each between a
`<candidate>` and a `</candidate>` line. Only train text is ever put in a request, and every
request passes the leakage guard before it is sent (omk.evolve.leakage).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from omk.evolve.evaluate import EvolveOutcome

CANDIDATE = re.compile(r"^<candidate>[ \t]*\r?\n(.*?)^</candidate>[ \t]*$", re.S | re.M)
MAX_FAILURES = 20  # train samples shown per request
MAX_REJECTED = 8  # earlier rejected candidates shown (the latest)

FOCUS_TEXT = {
    "description": "Change only the `description` in the front matter: it decides whether the agent uses the skill. "
    "Should-fire probes that missed need the description to cover their phrasing; near-misses that fired need it to exclude theirs.",
    "body": "Change only the body (below the front matter): it decides how well the agent does the task once the skill is used.",
    "both": "Change the description (whether the skill is used) or the body (how well the task is done), or both.",
}


class Rejected(msgspec.Struct, frozen=True, gc=False):
    """A candidate tried earlier and why it was not kept, as the improver is shown it."""

    text: str
    reason: str


def _failure(sample_prompt: str, outcome: EvolveOutcome) -> str:
    notes = "\n".join(f"  - {n}" for n in outcome.notes) or "  - (no failed check recorded)"
    return f"### {outcome.sample_id}\nPrompt: {sample_prompt}\nOutput: {outcome.output}\nWhat went wrong:\n{notes}\n"


def build_request(
    *, round_no: int, rounds: int, k: int, focus: str, edit_budget: float, skill_text: str,
    train: Sequence[tuple[str, EvolveOutcome]], rejected: Sequence[Rejected],
) -> str:  # fmt: skip
    """The request of one round; `train` is (prompt, outcome) of each train sample."""
    failing = [(p, o) for p, o in train if not o.passed]
    failed = failing[:MAX_FAILURES]
    parts = [
        f"You improve an agent skill (round {round_no} of {rounds}). {FOCUS_TEXT[focus]}",
        f"Keep the `name`, keep the description under 1,024 characters, change at most {edit_budget:.0%} of the lines.",
        f"Answer with {k} different complete SKILL.md files, each between a line `<candidate>` and a line `</candidate>`, nothing else.",
        "## The current SKILL.md\n<current>\n" + skill_text.rstrip("\n") + "\n</current>",
        f"## Train samples that failed ({len(failing)} of {len(train)}; {len(failed)} shown)\n" + ("\n".join(_failure(p, o) for p, o in failed) or "(none)"),
    ]
    if rejected:
        shown = rejected[-MAX_REJECTED:]
        parts.append("## Candidates rejected so far, and why\n" + "\n".join(f"<rejected reason=\"{r.reason}\">\n{r.text.rstrip()}\n</rejected>" for r in shown))
    return "\n\n".join(parts) + "\n"


def parse_answer(answer: str, k: int) -> list[str]:
    """The candidates in the answer (at most k, in order), each ending with one newline."""
    return [m.group(1).rstrip("\n") + "\n" for m in CANDIDATE.finditer(answer)][:k]
