"""Registries whose entries are imported on first use: a name mapped to `"module:attr"`.

A listing (the names, an error message naming them) imports nothing; only the entry asked for is
loaded. `attr` may be dotted (`"omk.targets.replay:ReplayTarget.from_spec"`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")


def load_ref(ref: str) -> object:
    """The object `"module:attr"` names."""
    module, sep, attr = ref.partition(":")
    if not sep or not attr:
        raise ValueError(f"{ref!r}: expected 'module:attr'")
    value: object = importlib.import_module(module)
    for part in attr.split("."):
        value = getattr(value, part)
    return value


class LazyRegistry(Generic[T]):
    """Names mapped to `"module:attr"` references, in the order they were added."""

    def __init__(self, entries: dict[str, str]):
        self.entries = entries  # the registry's own mapping: `register` adds to it

    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def register(self, name: str, ref: str) -> None:
        """Add an entry (or replace the one of that name); nothing is imported until it is used."""
        self.entries[name] = ref

    def load(self, name: str) -> T:
        """The entry's object; KeyError for an unknown name."""
        return cast(T, load_ref(self.entries[name]))  # what a reference names is known only once imported


def forwarder(module: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports each name of `homes` from its module (name -> module)
    on first use, so names that moved to modules loaded only when needed still import from
    `module`; the value is kept in `module`'s namespace, so the next use costs nothing."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(importlib.import_module(module), name, value)
        return value

    return __getattr__
