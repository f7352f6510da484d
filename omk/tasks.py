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
import gc
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


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


async def run_bounded(thunks: list[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
    """Await each thunk's coroutine, at most `limit` at once, started in list order; results in list order."""
    gate = asyncio.Semaphore(limit)

    async def one(thunk: Callable[[], Awaitable[T]]) -> T:
        async with gate:
            return await thunk()

    try:
        return await gather_all(*(one(t) for t in thunks))
    except asyncio.CancelledError:
        # Ctrl-C. A call cut off while its subprocess or connection was starting can leave a
        # transport no one holds; collect it now, while the loop can still close it quietly.
        gc.collect()
        raise
