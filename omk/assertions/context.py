"""What an assertion function gets to look at, and what it may call: the judge and the hooks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from omk.records import Trace
from omk.samples.model import NO_JUDGE, AssertionSpec, Outcome, Sample, Turn


class AssertionJudge(Protocol):
    """What a judge-scored assertion asks of the judge (the run's judge, omk.judge.Judge, is one)."""

    async def check_assertion(self, spec: AssertionSpec, ctx: CheckContext) -> Outcome: ...


class Hooks(Protocol):
    """Runs the user's custom hook files (omk.assertions.hooks.HookRunner is the one omk has)."""

    async def run(self, file: Path, output: str, ctx: dict[str, Any]) -> Outcome:
        """Call the hook in `file` as `check(output, ctx)`; a failing hook is a failed Outcome."""
        ...

    async def close(self) -> None: ...


@dataclass(slots=True)
class CheckContext:
    output: str
    trace: Trace
    sample: Sample
    judge: AssertionJudge | None = None  # the judge, when one is configured (judge-scored types)
    no_judge: str = NO_JUDGE  # why judge-scored types are skipped when `judge` is None
    hooks: Hooks | None = None  # the worker that runs custom hooks
    regex_timeout_s: float = 2.0
    # The names of the skills the run installs (`skill_used` fails on any other); None when the
    # target does not say (a cmd: agent with its own skills): the trace alone decides.
    skills: tuple[str, ...] | None = None
    # In a conversation: the turn being checked (`sample` is then that turn's view: its prompt,
    # context, rubric and assertions) and the earlier turns as (prompt, output) pairs.
    turn: Turn | None = None
    history: list[tuple[str, str]] | None = None
    # The folder the agent worked in, kept until the checks are done (None: the target worked
    # in no folder of its own, or the result came from the cache), and how a `command_passes`
    # command runs there: the run's per-call timeout and stdout cap, as for `cmd:` targets.
    workspace: Path | None = None
    command_timeout_s: float = 120.0
    max_output_bytes: int = 32 * 1024 * 1024

    def require_judge(self) -> AssertionJudge:
        """The judge, for a judge-scored check: the engine runs one only when there is a judge (or
        when the check decides alone, without asking it)."""
        if self.judge is None:
            raise RuntimeError(f"a judge-scored check asked for the judge, but there is none: {self.no_judge}")
        return self.judge
