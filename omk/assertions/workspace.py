"""Workspace assertions: what the agent left in the folder it worked in (omk.domain.workspace).

`file_exists`, `file_contains`, `file_json_schema` and `command_passes` look at the folder itself,
which the run keeps until the sample's checks are done; `files_changed` reads the list of files
the agent created, changed and deleted (the trace's `workspace`). A path is relative to the
workspace, with `/`; one that is absolute or climbs out with `..` is a load error, and a file
that is a symlink leading outside the workspace, or not a regular file, is never read. Without a
workspace (a model API target, a `cmd:` sample without `workspace:`, a result from the cache)
each of these checks is an error, which fails under `not` too.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import sys
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

from omk.assertions.context import CheckContext
from omk.assertions.registry import STRINGS, TEXT, PrepareError, assertion
from omk.assertions.structured import parse_strict_json, prepare_schema
from omk.assertions.text import compile_regex, js_text, low
from omk.core.secrets import Masker
from omk.domain.workspace import WORKSPACE_TYPES, checks_workspace
from omk.io.process import start_program, stop_program
from omk.io.safe_files import UnsafeFile, read_regular_bytes
from omk.samples.model import AssertionSpec, Layer, Outcome

__all__ = ["WORKSPACE_TYPES", "checks_workspace"]

MAX_FILE_BYTES = 16 * 1024 * 1024  # a checked file larger than this is not read
OUTPUT_SHOWN = 400  # characters of a command's output a message shows (its end)
PATH: dict[str, Any] = {"type": "string", "minLength": 1}
NO_FOLDER = "no workspace: the target worked in no folder of its own (claude:, or cmd: with `workspace:`), or the result came from the cache"


def _check_path(spec: AssertionSpec) -> str:
    name = spec.get("path")
    pure = PurePosixPath(str(name).replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or str(name).startswith("~"):
        raise PrepareError("path", f"{name!r} must be a path inside the workspace (relative, without ..)")
    return pure.as_posix()


def _read(ctx: CheckContext, name: str) -> tuple[bytes | None, str]:
    """(the file's bytes, "") or (None, why it cannot be read)."""
    folder = ctx.workspace
    if folder is None:
        return None, NO_FOLDER
    path = folder / name
    real, root = os.path.realpath(path), os.path.realpath(folder)
    if not (real == root or real.startswith(root + os.sep)):
        return None, f"{name} leads outside the workspace; not read"
    if not os.path.lexists(path):
        return None, f"{name} does not exist"
    try:
        return read_regular_bytes(Path(real), MAX_FILE_BYTES), ""
    except IsADirectoryError:
        return None, f"{name} is a folder, not a file"
    except UnsafeFile as exc:
        return None, f"{name}: {exc.strerror or exc}"
    except OSError as exc:
        return None, f"{name}: cannot read: {exc.strerror or exc}"


def _no_folder(ctx: CheckContext) -> Outcome | None:
    return Outcome(False, message=NO_FOLDER, error=True) if ctx.workspace is None else None


@assertion("file_exists", layer=Layer.FACT, schema={"required": ["path"], "properties": {"path": PATH}}, prepare=_check_path)
def file_exists(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The file `path` exists in the workspace after the run (a regular file, inside it)."""
    if (missing := _no_folder(ctx)) is not None:
        return missing
    name = _check_path(spec)
    data, why = _read(ctx, name)
    if data is None:
        return Outcome(False, message=why)
    return Outcome(True, metric=len(data), message=f"{name} exists ({len(data)} bytes)")


def _prepare_contains(spec: AssertionSpec) -> Any:
    _check_path(spec)
    if (spec.get("value") is None) == (spec.get("pattern") is None):
        raise PrepareError("value", "file_contains takes either `value` (a text) or `pattern` (a regex), not both or neither")
    if spec.get("pattern") is not None:
        return compile_regex(spec.get("pattern"), spec.get("flags") or "i")
    return None


@assertion(
    "file_contains",
    layer=Layer.FACT,
    schema={
        "required": ["path"],
        "properties": {"path": PATH, "value": TEXT, "pattern": {"type": "string", "minLength": 1}, "flags": {"type": "string"}},
    },
    prepare=_prepare_contains,
)
def file_contains(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The file `path` contains `value` (ignoring case), or matches `pattern` (a regex, as `regex`)."""
    if (missing := _no_folder(ctx)) is not None:
        return missing
    name = _check_path(spec)
    data, why = _read(ctx, name)
    if data is None:
        return Outcome(False, message=why)
    text = data.decode("utf-8", errors="replace")
    if spec.get("pattern") is None:
        needle = js_text(spec.get("value"))
        found = low(needle) in low(text)
        return Outcome(found, message=f'{name} {"contains" if found else "does not contain"} "{needle}"')
    compiled = spec.compiled if spec.compiled is not None else _prepare_contains(spec)
    try:
        match = compiled.pattern.search(text, timeout=ctx.regex_timeout_s)
    except TimeoutError:
        return Outcome(False, error=True, message=f"the pattern ran out of time ({ctx.regex_timeout_s:g}s) on {name}")
    shown = compiled.pattern.pattern
    return Outcome(match is not None, message=f"{name} {'matches' if match else 'does not match'} /{shown}/")


def _prepare_file_schema(spec: AssertionSpec) -> Any:
    _check_path(spec)
    return prepare_schema(spec)


@assertion(
    "file_json_schema",
    layer=Layer.FACT,
    schema={"required": ["path", "schema"], "properties": {"path": PATH, "schema": {"type": "object"}}},
    prepare=_prepare_file_schema,
)
def file_json_schema(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The file `path` is strict JSON that validates against `schema`."""
    from jsonschema.exceptions import best_match

    if (missing := _no_folder(ctx)) is not None:
        return missing
    name = _check_path(spec)
    data, why = _read(ctx, name)
    if data is None:
        return Outcome(False, message=why)
    value, bad = parse_strict_json(data.decode("utf-8", errors="replace"))
    if bad:
        return Outcome(False, message=f"{name}: {bad.replace('output', 'file').replace('json_valid', 'file_json_schema')}")
    validator = spec.compiled if spec.compiled is not None else _prepare_file_schema(spec)
    error = best_match(validator.iter_errors(value))
    if error is None:
        return Outcome(True, message=f"{name} matches the schema")
    return Outcome(False, message=f"{name}: schema violation at {error.json_path}: {error.message}")


def _prepare_changed(spec: AssertionSpec) -> None:
    if not spec.get("allowed") and not spec.get("required"):
        raise PrepareError("allowed", "files_changed needs `allowed` (globs of what may change), `required` (what must), or both")


@assertion(
    "files_changed",
    layer=Layer.FACT,
    schema={"properties": {"allowed": STRINGS, "required": STRINGS}},
    prepare=_prepare_changed,
)
def files_changed(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """Each `required` glob matches a file the agent changed, and every change matches `allowed` or `required`."""
    changes = ctx.trace.workspace
    if changes is None:
        return Outcome(False, message=NO_FOLDER, error=True)
    allowed, required = list(spec.get("allowed") or []), list(spec.get("required") or [])
    paths = changes.paths()
    unchanged = [g for g in required if not any(fnmatchcase(p, g) for p in paths)]
    outside = [p for p in paths if not any(fnmatchcase(p, g) for g in allowed + required)]
    problems = []
    if unchanged:
        problems.append(f"nothing changed matches {', '.join(unchanged)}")
    if outside:
        problems.append(f"changed outside what may change: {', '.join(outside[:10])}{' …' if len(outside) > 10 else ''}")
    if problems:
        return Outcome(False, metric=len(paths), message="; ".join(problems))
    return Outcome(True, metric=len(paths), message=f"{len(paths)} file(s) changed, all as allowed")


# --- command_passes -----------------------------------------------------------------------------


def _argv(spec: AssertionSpec) -> list[str]:
    try:
        argv = shlex.split(js_text(spec.get("value")))
    except ValueError as exc:
        raise PrepareError("value", f"cannot split the command line: {exc}") from None
    if not argv:
        raise PrepareError("value", "empty command line")
    if argv[0] in ("python", "python3") and shutil.which(argv[0]) is None:
        argv[0] = sys.executable  # no `python` on PATH: the interpreter running omk, as cmd: targets do
    return argv


async def _read_all(streams: list[asyncio.StreamReader], limit: int) -> bytes | None:
    """Everything the command prints (stdout and stderr together); None past `limit` bytes."""
    out = bytearray()

    async def drain(stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            out.extend(chunk)
            if len(out) > limit:
                raise OverflowError

    try:
        await asyncio.gather(*(drain(s) for s in streams))
    except OverflowError:
        return None
    return bytes(out)


@assertion(
    "command_passes",
    layer=Layer.FACT,
    kind="async",
    schema={"required": ["value"], "properties": {"value": {"type": "string", "minLength": 1}}},
    prepare=_argv,
)
async def command_passes(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """The command `value`, run in the workspace after the agent finished, exits with code 0."""
    if ctx.workspace is None:
        return Outcome(False, message=NO_FOLDER, error=True)
    argv, shown = _argv(spec), js_text(spec.get("value"))
    try:
        proc = await start_program(argv, cwd=ctx.workspace)
    except OSError as exc:
        return Outcome(False, error=True, message=f"cannot start {argv[0]}: {exc.strerror or exc}")
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.close()
        async with asyncio.timeout(ctx.command_timeout_s):
            output = await _read_all([proc.stdout, proc.stderr], ctx.max_output_bytes)
            code = await proc.wait() if output is not None else None
    except TimeoutError:
        return Outcome(False, error=True, message=f"`{shown}` timed out after {ctx.command_timeout_s:g}s and was killed")
    finally:
        await stop_program(proc)
    if output is None or code is None:
        return Outcome(False, error=True, message=f"`{shown}` printed more than {ctx.max_output_bytes} bytes; raise max_output_bytes in omk.yaml if that is expected")
    tail = Masker.for_run().clip(output.decode("utf-8", errors="replace").strip(), OUTPUT_SHOWN, keep_end=True)
    message = f"`{shown}` exited with code {code}" + (f": {tail}" if tail and code != 0 else "")
    return Outcome(code == 0, metric=code, message=message)
