"""What one evaluation is asked to do: the choices `omk eval` takes, as a typed object.

Every field left at None means "not given here": omk.yaml, then the environment, then omk's own
default decide it, exactly as for the command line. Field names are the command line's (`--no-cache`
is `no_cache`), so a run folder records them under the same names and `--resume` reads them back.

The fields mirror the settings spec's command-line face (omk/settings/spec.py; a test holds the
two together) so that type checkers see them; a setting added to the spec without a field here
is carried in `added` and read with `get`.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass, field, fields
from typing import Any, Union, get_args, get_origin, get_type_hints


@dataclass(slots=True)
class EvalOptions:
    samples: list[str] = field(default_factory=list)  # files or folders; empty: discover eval-samples.*
    target: str | None = None  # KIND:ARG
    judge: str | None = None  # SPEC[,SPEC...]
    no_judge: bool = False
    judge_repeat: int | None = None
    no_debias_length: bool = False
    concurrency: int | None = None
    timeout: float | None = None
    retries: int | None = None
    repeat: int | None = None
    no_cache: bool = False
    resume: str | None = None  # a run folder to finish
    threshold: float | None = None
    filter: str | None = None  # a glob over sample_id
    mcp_config: str | None = None
    url_allow: list[str] | None = None  # inside hosts / CIDRs URL inlining may fetch
    no_urls: bool = False  # no URL inlining at all
    out: str | None = None  # the run folder
    format: str | None = None  # report formats, comma-separated
    lang: str | None = None
    quiet: bool = False
    strict: bool = False  # an unknown field on a sample is an error, not a warning
    prompts: list[str] | None = None  # inline prompts instead of files (as runevals takes them)
    expected: list[str] | None = None
    evaluators: str | None = None
    control: str | None = None  # an experiment's control variant (SPEC)
    treatment: list[str] | None = None  # its treatments (SPEC[,SPEC...], repeatable)
    ablate: str | None = None  # a skill folder: the experiment removes one part of it per treatment
    trivial: float | None = None  # the smallest composite difference worth acting on
    require: str | None = None  # progress | no-regress: the verdict becomes the exit code
    max_cost_increase: float | None = None  # percent: a treatment whose cost per sample rises more is CAUTIOUS
    seed: int | None = None  # the experiment's schedule and bootstrap seed
    shard: str | None = None  # I/N: run only the I-th of N disjoint parts (omk/engine/shards.py)
    dry_run: bool = False  # load, check and plan the run, print what it would call and cost; no call
    budget_usd: float | None = None  # no new call once this invocation's target and judge spend reaches it
    budget_per_sample_usd: float | None = None  # the budget as so much per (sample, repeat) still to run
    gold: list[str] | None = None  # labels files to check the judge against (omk.gold)
    pairwise: bool | None = None  # the pairwise judge in an experiment; None: when variants differ by target only
    added: dict[str, Any] = field(default_factory=dict)  # settings of the spec with no field above

    def get(self, name: str) -> Any:
        """The value of the setting `name` (a field, or one in `added`), None when not given."""
        return self.added.get(name) if name in self.added or name not in _FIELDS else getattr(self, name)

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> EvalOptions:
        """From argparse's namespace (`vars(args)`) or a run folder's record; unknown keys are ignored."""
        from omk.settings import spec

        known = spec.by_name()
        added = {k: v for k, v in values.items() if k not in _FIELDS and k in known and v is not None}
        return cls(**{k: v for k, v in values.items() if k in _FIELDS and k != "added" and v is not None}, added=added)

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
        return {**{f.name: getattr(self, f.name) for f in fields(self) if f.name != "added"}, **self.added}


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
