"""`omk eval`'s flags, made from the settings spec (omk.settings.spec): one argparse option per
setting with a command-line face, in the spec's order, in its group and mutually exclusive set."""

from __future__ import annotations

import argparse
from typing import Any

from omk.settings import spec


def add_flags(parser: argparse.ArgumentParser, group: str | None = None) -> None:
    """Add the flags of the settings in `group` (None: the command's own options) to `parser`."""
    groups: dict[str | None, Any] = {None: parser}
    exclusive: dict[str, Any] = {}
    for setting in spec.SETTINGS:
        flag = setting.flag
        if flag is None or flag.group != group:
            continue
        if flag.group not in groups:
            groups[flag.group] = parser.add_argument_group(flag.group)
        where = groups[flag.group]
        if flag.exclusive is not None:
            if flag.exclusive not in exclusive:
                exclusive[flag.exclusive] = where.add_mutually_exclusive_group()
            where = exclusive[flag.exclusive]
        where.add_argument(setting.option, **_keywords(setting))


def _keywords(setting: spec.Setting) -> dict[str, Any]:
    flag = setting.flag
    assert flag is not None
    keywords: dict[str, Any] = {"help": setting.help, "dest": setting.name}
    convert = flag.convert or setting.number
    if convert is not None and flag.action not in ("store_true",) and flag.action is not argparse.BooleanOptionalAction:
        keywords["type"] = convert
    for key in ("metavar", "action", "nargs"):
        if getattr(flag, key) is not None:
            keywords[key] = getattr(flag, key)
    if flag.choices is not None:
        keywords["choices"] = list(flag.choices)
    return keywords


def groups() -> list[str]:
    """The argument groups' titles, in the order the spec first names them."""
    found: list[str] = []
    for setting in spec.SETTINGS:
        if setting.flag is not None and setting.flag.group is not None and setting.flag.group not in found:
            found.append(setting.flag.group)
    return found
