"""What one evaluation is asked to do: the choices `omk eval` takes, as a typed object.

Every field left at None means "not given here": omk.yaml, then the environment, then omk's own
default decide it, exactly as for the command line. Field names are the command line's (`--no-cache`
is `no_cache`), so a run folder records them under the same names and `--resume` reads them back.

The fields are the settings spec's command-line face (omk/settings/spec.py), written from it by
omk.settings.faces so that type checkers see them.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass, field, fields
from typing import Any, Union, get_args, get_origin, get_type_hints


@dataclass(slots=True)
class EvalOptions:
    samples: list[str] = field(default_factory=list)  # files or folders; empty: discover eval-samples.*
    # --- fields made from the settings spec by `python -m omk.settings.faces`: edit omk/settings/spec.py, not these lines ---
    target: str | None = None
    prompts: list[str] | None = None
    expected: list[str] | None = None
    evaluators: str | None = None
    judge: str | None = None
    no_judge: bool = False
    judge_repeat: int | None = None
    no_debias_length: bool = False
    concurrency: int | None = None
    timeout: float | None = None
    retries: int | None = None
    repeat: int | None = None
    no_cache: bool = False
    resume: str | None = None
    dry_run: bool = False
    budget_usd: float | None = None
    budget_per_sample_usd: float | None = None
    threshold: float | None = None
    filter: str | None = None
    mcp_config: str | None = None
    url_allow: list[str] | None = None
    no_urls: bool = False
    shard: str | None = None
    out: str | None = None
    format: str | None = None
    lang: str | None = None
    quiet: bool = False
    strict: bool = False
    gold: list[str] | None = None
    control: str | None = None
    treatment: list[str] | None = None
    ablate: str | None = None
    trivial: float | None = None
    require: str | None = None
    max_cost_increase: float | None = None
    seed: int | None = None
    pairwise: bool | None = None
    # --- end of the fields made from the settings spec ---

    def get(self, name: str) -> Any:
        """The value of the setting `name`, None when it has no flag (an omk.yaml-only one)."""
        return getattr(self, name, None) if name in _FIELDS else None

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> EvalOptions:
        """From argparse's namespace (`vars(args)`) or a run folder's record; unknown keys are ignored."""
        return cls(**{k: v for k, v in values.items() if k in _FIELDS and v is not None})

    @classmethod
    def from_record(cls, values: dict[str, Any], where: str) -> EvalOptions:
        """From a run folder's record (run.json's `cli`), each value checked against its field's
        type: a hand-edited one is an InputError naming `where` and `cli.FIELD`."""
        from omk.core.errors import InputError, Problem

        hints = get_type_hints(cls)
        for key, value in values.items():
            if key in hints and value is not None and not _fits(value, hints[key]):
                wanted = str(hints[key]).replace("typing.", "").replace("NoneType", "null")
                raise InputError([Problem(where, None, "", f"cli.{key}", f"expected {wanted}, found {value!r:.60}")])
        return cls.from_mapping(values)

    def as_cli(self) -> dict[str, Any]:
        """The choices as the settings loader and the run folder's record read them."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


_FIELDS = frozenset(f.name for f in fields(EvalOptions))


def _fits(value: Any, hint: Any) -> bool:
    """Whether a JSON value has the type a field is declared with (bool is no number here)."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(_fits(value, arg) for arg in get_args(hint))
    if origin is list:
        return isinstance(value, list) and all(_fits(v, get_args(hint)[0]) for v in value)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if hint is str:
        return isinstance(value, str)
    return True
