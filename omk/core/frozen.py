"""`@record`: a frozen dataclass with slots (the records omk writes, and its other frozen
values), made more cheaply than `@dataclass(frozen=True, slots=True)` makes one.

Python 3.11's dataclass compiles six methods for each frozen class (`__init__`, `__repr__`,
`__eq__`, `__hash__`, `__setattr__`, `__delattr__`) from generated source, one by one; with the
many records omk defines, that compiling is a large part of its start-up. A record compiles only its
`__init__`, and that one stores each field straight through its slot (a frozen dataclass's
`__init__` calls `object.__setattr__` by name for every field, a cost paid for every result and
every check). Equality, hashing, `repr`, refusing assignment and pickling are shared functions that
read the class's field names, and behave as the dataclass's own: equal when of the same class with
equal compared fields, `Name(field=value, …)`, `FrozenInstanceError` on assignment or deletion.

A record is a dataclass (`dataclasses.fields`, `replace`, `asdict` work) and type checkers read it
as a frozen one (`dataclass_transform`). A class may still define its own `__eq__`, `__hash__` or
`__repr__`; `InitVar` fields are not supported (refused when the class is made).
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T")


class _Factory:
    """The default of a field with a `default_factory`: "call the factory" (shown as the dataclass shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


@overload
def record(cls: type[T], /) -> type[T]: ...


@overload
def record(*, eq: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def record(cls: type[Any] | None = None, /, *, eq: bool = True) -> Any:
    """Make `cls` a frozen dataclass with slots (`eq=False`: compared and hashed by identity)."""

    def make(klass: type[Any]) -> type[Any]:
        return _make(klass, eq)

    return make if cls is None else make(cls)


def _make(cls: type[Any], eq: bool) -> type[Any]:
    own = set(cls.__dict__)
    explicit_hash = "__hash__" in own and not (cls.__dict__["__hash__"] is None and "__eq__" in own)
    if any("InitVar" in str(kind) for kind in cls.__dict__.get("__annotations__", {}).values()):
        raise TypeError(f"@record does not support InitVar fields ({cls.__name__})")
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=True)
    fields = dataclasses.fields(cls)
    cls.__init__ = _init(cls, fields)
    cls._record_shown = tuple(f.name for f in fields if f.repr)
    cls._record_key = _getter([f.name for f in fields if f.compare])
    cls._record_hashed = _getter([f.name for f in fields if (f.compare if f.hash is None else f.hash)])
    cls._record_names = tuple(f.name for f in fields)
    shared = {"__setattr__": _setattr, "__delattr__": _delattr, "__getstate__": _getstate, "__setstate__": _setstate}
    if "__repr__" not in own:
        shared["__repr__"] = _repr
    if eq and "__eq__" not in own:
        shared["__eq__"] = _eq
    if eq and not explicit_hash:  # a class's own __eq__ alone leaves __hash__ None: hashed by fields, as a dataclass does
        shared["__hash__"] = _hash
    for name, function in shared.items():
        setattr(cls, name, function)
    return cls


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """A function giving a record's values of `names` as a tuple (compared and hashed as the
    dataclass compares and hashes its field tuple)."""
    if not names:
        return lambda _record: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda record: (one(record),)
    return attrgetter(*names)


def _init(cls: type[Any], fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    """The `__init__`: the dataclass's parameters, then one slot store per field."""
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY}
    exec(_source(cls, fields, namespace), namespace)  # noqa: S102 - the text is built from the class's own field names
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = {f.name: f.type for f in fields if f.init} | {"return": None}
    return init


def _source(cls: type[Any], fields: tuple[dataclasses.Field[Any], ...], namespace: dict[str, Any]) -> str:
    """The text of the `__init__`: parameters as the dataclass orders them (keyword-only fields
    last), defaults and factories resolved as the dataclass would, `__post_init__` called last."""
    params = [_param(f, namespace) for f in fields if f.init and not f.kw_only]
    keyword = [_param(f, namespace) for f in fields if f.init and f.kw_only]
    if keyword:
        params += ["*", *keyword]
    body = []
    for f in fields:
        value = f.name
        if f.default_factory is not dataclasses.MISSING:
            namespace[f"_make_{f.name}"] = f.default_factory
            value = f"_make_{f.name}() if {f.name} is _FACTORY else {f.name}" if f.init else f"_make_{f.name}()"
        elif not f.init:
            if f.default is dataclasses.MISSING:
                continue  # the dataclass leaves such a slot unset too
            value = f"_default_{f.name}"
            namespace[value] = f.default
        namespace[f"_set_{f.name}"] = _slot(cls, f.name).__set__
        body.append(f"    _set_{f.name}(self, {value})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    return f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"


def _param(f: dataclasses.Field[Any], namespace: dict[str, Any]) -> str:
    if f.default_factory is not dataclasses.MISSING:
        return f"{f.name}=_FACTORY"
    if f.default is not dataclasses.MISSING:
        namespace[f"_default_{f.name}"] = f.default
        return f"{f.name}=_default_{f.name}"
    return f.name


def _slot(cls: type[Any], name: str) -> Any:
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    raise TypeError(f"{cls.__name__}.{name} has no slot")


def _setattr(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        key = self._record_key
        return key(self) == key(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self._record_hashed(self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._record_shown)
    return f"{self.__class__.__qualname__}({shown})"


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, name) for name in self._record_names]


def _setstate(self: Any, state: list[Any]) -> None:
    for name, value in zip(self._record_names, state, strict=True):
        object.__setattr__(self, name, value)


def is_frozen(cls: type[Any]) -> bool:
    """Whether instances of the dataclass `cls` refuse assignment: a record, or `frozen=True`."""
    return cls.__dataclass_params__.frozen or cls.__dict__.get("__setattr__") is _setattr
