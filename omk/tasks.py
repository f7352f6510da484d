"""`gather_all`: asyncio.gather that, when cancelled, returns only once everything it ran has stopped.

On Ctrl-C asyncio.run cancels the run. A plain gather then gives up as soon as one of its
awaitables ends cancelled, while the others may still be killing and reaping a program (a `cmd:`
target or judge) or closing a connection; asyncio.run would close the loop under them, which
leaves programs running and prints "Event loop is closed" tracebacks. Every gather in the run
path goes through this one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any


async def gather_all(*aws: Awaitable[Any]) -> list[Any]:
    tasks = [asyncio.ensure_future(aw) for aw in aws]
    try:
        return list(await asyncio.gather(*tasks))
    except asyncio.CancelledError:
        for task in tasks:
            if not task.done() and not task.cancelling():  # cancelling twice cuts a clean-up short
                task.cancel()
        while not all(task.done() for task in tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait(tasks)
        raise
