"""The choices of an evaluation checked where every caller passes through: the command line's
parser checks its flags, but the Python API and the pytest plugin hand values straight in. The
ranges and choices are the settings spec's (omk/settings/spec.py), in the command line's words."""

from __future__ import annotations

import math

from omk.core.errors import ConfigError
from omk.engine.options import EvalOptions
from omk.settings import spec


def check_options(options: EvalOptions) -> None:
    """Raise `ConfigError` naming the first option out of range, as the command line would."""
    for setting in spec.SETTINGS:
        value = options.get(setting.name)
        if value is None:
            continue
        number = setting.number
        if number is not None:
            whole = isinstance(value, int) or not number.whole
            ok_type = isinstance(value, int | float) and not isinstance(value, bool) and whole
            if not ok_type or (isinstance(value, float) and math.isnan(value)) or not number.admits(value):
                kind = "a whole number" if number.whole else "a number"
                raise ConfigError(f"{setting.name}: must be {kind} {number.words()} (got {value!r})")
        if setting.check_entry is not None:
            _check_entries(setting, value)
        allowed = setting.flag.choices if setting.flag is not None else None
        if allowed is not None and value not in allowed:
            raise ConfigError(f"{setting.name}: must be one of {', '.join(allowed)} (got {value!r})")


def _check_entries(setting: spec.Setting, value: object) -> None:
    """Each entry of a list setting (`url_allow`) checked as the command line checks it."""
    import argparse

    assert setting.check_entry is not None
    for entry in value if isinstance(value, list) else [value]:
        try:
            setting.check_entry(str(entry))
        except argparse.ArgumentTypeError as exc:
            raise ConfigError(f"{setting.name}: {exc}") from None
