"""`custom`: a user's Python or JS check function, run by a `HookRunner` worker.

`fn` is resolved against the samples file's folder. The hook is called as `check(output, ctx)`
(Python: `check`, `main` or `default`; JS: default export or `check`, may be async) with
`ctx = {"sample", "assertion", "trace"}` as plain JSON data. When the context carries no
runner (direct API use), a one-off runner is started for the call and stopped after it.
"""

from __future__ import annotations

from pathlib import Path

from omk.assertions.context import CheckContext
from omk.assertions.hooks import JS_SUFFIXES, PYTHON_SUFFIXES, HookRunner
from omk.assertions.registry import PrepareError, assertion
from omk.samples.model import AssertionSpec, Layer, Outcome


def prepare_custom(spec: AssertionSpec) -> None:
    fn = str(spec.get("fn"))
    if not fn.lower().endswith(PYTHON_SUFFIXES + JS_SUFFIXES):
        raise PrepareError("fn", f"custom hook {fn!r} must be a .py, .js or .mjs file")


def hook_file(fn: str, base_dir: Path) -> Path:
    """The hook `fn` names, relative to the samples file's folder (the loader checks it exists)."""
    return (Path(base_dir) / fn).resolve()


def hook_path(spec: AssertionSpec, ctx: CheckContext) -> Path:
    return hook_file(str(spec.get("fn")), ctx.sample.base_dir)


@assertion(
    "custom",
    layer=Layer.BEHAVIOR,
    kind="async",
    schema={
        "required": ["fn"],
        "properties": {"fn": {"type": "string", "minLength": 1}},
        "additionalProperties": True,  # extra keys are passed to the hook as `ctx["assertion"]`
    },
    prepare=prepare_custom,
)
async def custom(spec: AssertionSpec, ctx: CheckContext) -> Outcome:
    """A user hook decides: `check(output, ctx)` returns a bool or `{pass, message, score}`."""
    payload = {"sample": ctx.sample.raw, "assertion": spec.raw, "trace": ctx.trace.to_json()}
    file = hook_path(spec, ctx)
    if ctx.hooks is not None:
        return await ctx.hooks.run(file, ctx.output, payload)
    async with HookRunner() as runner:
        return await runner.run(file, ctx.output, payload)
