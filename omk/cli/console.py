"""The rich console every command prints through.

rich's own answer to a reader that leaves early (`omk eval … | head -3`) is to exit with status 1,
which would turn a passed gate into a failed CI step. This console stops writing instead (the rest
goes to /dev/null, Python's recipe for SIGPIPE) and the command ends with its own exit code.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def make_console(stderr: bool = False, **options: Any) -> Any:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            stream = sys.stderr if stderr else sys.stdout
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())

    return _Console(stderr=stderr, highlight=False, **options)
