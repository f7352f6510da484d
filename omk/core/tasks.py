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
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")


async def gather_all(*aws: Awaitable[Any]) -> list[Any]:
    tasks = [asyncio.ensure_future(aw) for aw in aws]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:  # Ctrl-C, or one task failed (a run folder that stopped taking writes): end the rest
        for task in tasks:
            if not task.done() and not task.cancelling():  # cancelling twice cuts a clean-up short
                task.cancel()
        while not all(task.done() for task in tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait(tasks)
        raise


async def run_bounded(thunks: Iterable[Callable[[], Awaitable[T]]], limit: int, *, keep: bool = True) -> list[T]:
    """Await each thunk's coroutine, at most `limit` at once, started in order; results in that
    order (none kept with `keep=False`, for a caller that streams them as they come).

    `limit` workers take the thunks one after another, so no task waits for its turn: the cost
    of a job not yet started is its thunk alone, and `thunks` may be a generator.
    """
    done: dict[int, T] = {}
    queue = enumerate(thunks)

    async def worker() -> None:
        for i, thunk in queue:
            value = await thunk()
            if keep:
                done[i] = value

    try:
        await gather_all(*(worker() for _ in range(max(1, limit))))
    except asyncio.CancelledError:
        # Ctrl-C. A call cut off while its subprocess or connection was starting can leave a
        # transport no one holds; collect it now, while the loop can still close it quietly.
        gc.collect()
        raise
    return [done[i] for i in range(len(done))]
