"""The worker process that runs Python custom hooks: `python -m omk.assertions.hook_worker`.

Requests arrive as JSON lines on stdin: `{"id", "call": {"file", "output", "ctx"}}`. Each answer is one
line on the original stdout, `MARKER + {"id", "ok": true, "result": {"pass", "message",
"score"}}` or `{"id", "ok": false, "error"}`. Whatever a hook prints (even from a child process)
goes to stderr, so it cannot corrupt the protocol. Modules are loaded once per file version.
Kept free of omk imports so it starts fast.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

MARKER = "\x1eomk-hook "
_FUNCTIONS = ("check", "main", "default")
_modules: dict[tuple[str, int], Any] = {}


def _load(file: str) -> Any:
    key = (file, os.stat(file).st_mtime_ns)
    module = _modules.get(key)
    if module is None:
        name = f"omk_hook_{len(_modules)}_{Path(file).stem}"
        spec = importlib.util.spec_from_file_location(name, file)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {file}")
        module = importlib.util.module_from_spec(spec)
        folder = str(Path(file).parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)  # a hook may import helpers that sit beside it
        spec.loader.exec_module(module)
        _modules[key] = module
    return module


def normalize(result: Any) -> dict[str, Any]:
    """A bool, or a dict with `pass` (truthy), optional `message` and numeric `score`."""
    if isinstance(result, bool):
        return {"pass": result, "message": None, "score": None}
    if isinstance(result, dict):
        message = result.get("message")
        score = result.get("score")
        if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
            score = None
        return {
            "pass": bool(result.get("pass")),
            "message": None if message is None else str(message),
            "score": score,
        }
    raise TypeError(
        f"hook returned {type(result).__name__}; expected a bool or a dict with pass, message, score"
    )


def run_hook(file: str, output: str, ctx: dict[str, Any]) -> dict[str, Any]:
    module = _load(file)
    fn = next((getattr(module, n) for n in _FUNCTIONS if callable(getattr(module, n, None))), None)
    if fn is None:
        raise AttributeError(f"{Path(file).name} must define check(output, ctx) (or main / default)")
    result = fn(output, ctx)
    if inspect.isawaitable(result):
        result = asyncio.run(_await(result))
    return normalize(result)


async def _await(awaitable: Any) -> Any:
    return await awaitable


def main() -> None:
    requests = os.fdopen(os.dup(0), encoding="utf-8")
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # a hook that reads stdin must not eat requests
    os.dup2(2, 1)  # prints from hooks and their children go to stderr
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the worker
    sys.stdout = sys.stderr
    for line in requests:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = {"id": request["id"], "ok": True, "result": run_hook(**request["call"])}
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # SystemExit from a hook fails that hook, not the worker
            answer = {"id": request["id"], "ok": False, "error": f"{type(exc).__name__}: {exc}"}
        protocol.write(MARKER + json.dumps(answer, ensure_ascii=False, default=str) + "\n")
        protocol.flush()


if __name__ == "__main__":
    main()
