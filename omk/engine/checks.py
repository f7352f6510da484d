"""The choices of an evaluation checked where every caller passes through: the command line's
parser checks its flags, but the Python API and the pytest plugin hand values straight in."""

from __future__ import annotations

import math
from typing import Any

from omk.config import RANGES
from omk.engine.options import EvalOptions
from omk.errors import ConfigError

# option -> (the kind of number it is, the RANGES rule or a rule of its own)
NUMBERS: dict[str, tuple[type, str]] = {
    "threshold": (float, "threshold"),
    "concurrency": (int, "concurrency"),
    "timeout": (float, "timeout"),
    "retries": (int, "retries"),
    "judge_repeat": (int, "judge_repeat"),
    "repeat": (int, "repeat"),
    "trivial": (float, "trivial"),
    "seed": (int, "seed"),
    "max_cost_increase": (float, "max_cost_increase"),
}
OWN_RULES: dict[str, tuple[Any, str]] = {
    "repeat": (lambda v: v >= 1, "at least 1"),
    "trivial": (lambda v: 0 < v < float("inf"), "greater than 0"),
    "seed": (lambda v: v >= 0, "0 or more"),
}
CHOICES = {"lang": ("en", "zh"), "require": ("progress", "no-regress")}


def check_options(options: EvalOptions) -> None:
    """Raise `ConfigError` naming the first option out of range, as the command line would."""
    for name, (kind, rule) in NUMBERS.items():
        value = getattr(options, name)
        if value is None:
            continue
        test, words = OWN_RULES.get(rule) or RANGES[rule]
        ok_type = isinstance(value, int | float) and not isinstance(value, bool) and (kind is float or isinstance(value, int))
        if not ok_type or (isinstance(value, float) and math.isnan(value)) or not test(value):
            raise ConfigError(f"{name}: must be {'a whole number' if kind is int else 'a number'} {words} (got {value!r})")
    for name, allowed in CHOICES.items():
        value = getattr(options, name)
        if value is not None and value not in allowed:
            raise ConfigError(f"{name}: must be one of {', '.join(allowed)} (got {value!r})")
