"""Errors a user can act on. Bad input is collected, never raised one at a time."""

from __future__ import annotations

import msgspec


class Problem(msgspec.Struct, frozen=True, gc=False):
    """One thing wrong with the input: `FILE:LINE: samples[i] (id) FIELD: what is wrong`."""

    file: str
    line: int | None
    where: str  # "samples[3] (s004)", "" for file-level problems
    field: str  # "assertions[1].type", "" when the whole item is wrong
    message: str
    severity: str = "error"  # "warning": reported, and the run goes on (an unknown field on a sample)

    def render(self) -> str:
        loc = f"{self.file}:{self.line}" if self.line else self.file
        head = " ".join(p for p in (self.where, self.field) if p)
        text = f"{head}: {self.message}" if head else self.message
        return f"{loc}: {text}" if loc else text


class OmkError(Exception):
    """Base for errors that end a command with a clear message instead of a traceback."""

    exit_code = 2


class InputError(OmkError):
    """Bad samples, configuration or command line: exit code 2, one line per problem."""

    def __init__(self, problems: list[Problem] | str):
        if isinstance(problems, str):
            problems = [Problem("", None, "", "", problems)]
        self.problems = problems
        super().__init__("\n".join(p.render() for p in problems))

    def lines(self) -> list[str]:
        return [p.render() for p in self.problems]


class ConfigError(InputError):
    """A bad omk.yaml, target spec or option."""
