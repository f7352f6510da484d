"""Reading one object of report.json with its types checked, field by field: what the experiment
block and the pairwise judge's comparisons are read with (omk/records/experiment_block.py says why
they are not on msgspec's typed decoding). Every other record omk writes is read by msgspec
(omk/records/wire.py).

A field that is missing or null takes its default (reports written by older omk lack fields added
since); a field of the wrong type is an `InputError` naming the file and the field, e.g.
`run/report.json: experiment.comparisons[0].n: expected an integer or null, found 'x'`.
Values are kept as written (an integer stays an integer), so every format prints them as before.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any

from omk.core.errors import InputError
from omk.records.wire import Number, shown


class Fields:
    """One JSON object of the report read from `origin`; where it sits (`results[3].trace`) is
    worked out only for an error message, so reading a large report stays cheap."""

    __slots__ = ("data", "origin", "parent", "step")

    def __init__(self, data: Mapping[str, Any], origin: str, parent: Fields | None = None, step: str | int = "") -> None:
        self.data, self.origin, self.parent, self.step = data, origin, parent, step

    @classmethod
    def of(cls, value: Any, origin: str, path: str) -> Fields:
        if not isinstance(value, Mapping):
            raise cls.error(origin, path, "an object", value)
        return cls(value, origin, None, path)

    @staticmethod
    def error(origin: str, path: str, expected: str, found: Any) -> InputError:
        where = f"{origin}: {path or '(top)'}"
        return InputError(f"{where}: expected {expected}, found {shown(found)}; was report.json edited by hand?")

    @property
    def path(self) -> str:
        if self.parent is None:
            return str(self.step)
        return self.parent.at(self.step)

    def at(self, key: str | int) -> str:
        path = self.path
        if isinstance(key, int):
            return f"{path}[{key}]"
        return f"{path}.{key}" if path else key

    def fail(self, key: str, expected: str) -> InputError:
        return self.error(self.origin, self.at(key), expected, self.data.get(key))

    def str(self, key: str, default: str | None = None) -> Any:
        value = self.data.get(key)
        if value is None:
            return default
        if type(value) is not str and not isinstance(value, str):
            raise self.fail(key, "a string or null")
        return value

    def num(self, key: builtins.str, default: Number | None = None) -> Any:
        value = self.data.get(key)
        if value is None:
            return default
        kind = type(value)
        if kind is not float and kind is not int and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise self.fail(key, "a number or null")
        return value

    def int(self, key: builtins.str, default: int | None = 0) -> Any:
        value = self.data.get(key)
        if value is None:
            return default
        if type(value) is not int and (isinstance(value, bool) or not isinstance(value, int)):
            raise self.fail(key, "an integer or null")
        return value

    def bool(self, key: builtins.str, default: bool | None = False) -> Any:
        value = self.data.get(key)
        if value is None:
            return default
        if value is not True and value is not False:
            raise self.fail(key, "true, false or null")
        return value

    def obj(self, key: builtins.str) -> Fields | None:
        """The object under `key`; None when missing or null."""
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.fail(key, "an object or null")
        return type(self)(value, self.origin, self, key)

    def objs(self, key: builtins.str) -> list[Fields]:
        """The list of objects under `key`; [] when missing or null."""
        values = self.list(key)
        if not values:
            return []
        holder = type(self)({}, self.origin, self, key)  # names the list in an error: `results[3]`
        for i, item in enumerate(values):
            if not isinstance(item, Mapping):
                raise self.error(self.origin, holder.at(i), "an object", item)
        return [type(self)(item, self.origin, holder, i) for i, item in enumerate(values)]

    def list(self, key: builtins.str) -> list[Any]:
        value = self.data.get(key)
        if value is None:
            return []
        if type(value) is not list and not isinstance(value, list):
            raise self.fail(key, "a list or null")
        return value

    def strs(self, key: builtins.str) -> tuple[builtins.str, ...]:
        values = self.list(key)
        for i, v in enumerate(values):
            if not isinstance(v, str):
                raise self.error(self.origin, f"{self.at(key)}[{i}]", "a string", v)
        return tuple(values)

    def raw(self, key: builtins.str, default: Any = None) -> Any:
        """Any JSON value (what an assertion checked for, a tool call's input), unchecked."""
        return self.data.get(key, default)
