"""How commands write to the terminal: the rich console, or `say` for one plain line.

A reader that leaves early (`omk eval … | head -3`) must not change a command's exit code: rich's
own answer is to exit with status 1 (a passed gate would fail the CI step), a plain print raises
BrokenPipeError (the command would stop before returning its code). Both stop writing instead
(the rest goes to /dev/null, Python's recipe for SIGPIPE) and the command ends with its own code.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def _to_devnull(stream: Any) -> None:
    os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def say(text: str, err: bool = False) -> None:
    """print(text) to stdout (stderr when `err`), flushed, its control characters escaped; once
    the reader has left, nothing more is written."""
    from omk.io.textsafe import for_terminal

    stream = sys.stderr if err else sys.stdout
    try:
        print(for_terminal(text), file=stream, flush=True)
    except BrokenPipeError:
        _to_devnull(stream)


def make_console(stderr: bool = False, **options: Any) -> Any:
    from omk.report.plain import PlainConsole

    class _Console(PlainConsole):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            _to_devnull(sys.stderr if stderr else sys.stdout)

    return _Console(stderr=stderr, **options)
