"""A quicker `__init__` for the frozen records a run builds for every sample.

A frozen dataclass's generated `__init__` stores each field with `object.__setattr__(self, name,
value)`, which looks the attribute up by name on every call; the records built for every sample
and every check (a result, its assertions, its scores) spend a good part of their construction
there. `quick_init` gives such a class an `__init__` with the same parameters, defaults and
`__post_init__` call that stores each field straight through its slot. The class stays a frozen
dataclass: assigning to a field afterwards still raises `FrozenInstanceError`, `replace` and
equality work as before, and type checkers still read the dataclass's own signature.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")

class _Factory:
    """The default of a field with a `default_factory`: "call the factory" (shown as the dataclass shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def quick_init(cls: type[T]) -> type[T]:
    """Replace the `__init__` of a frozen, slotted dataclass with one that sets its slots directly."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"quick_init needs a frozen dataclass with slots, not {cls.__name__}")
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY}
    source = _source(cls, dataclasses.fields(cls), namespace)  # type: ignore[arg-type]  # T is a dataclass: checked above
    exec(source, namespace)  # noqa: S102 - the text is built from the class's own field names
    init = namespace["__init__"]
    if _names(init) != _names(cls.__init__):  # e.g. an InitVar, which `fields()` leaves out
        raise TypeError(f"quick_init cannot rebuild the parameters of {cls.__name__}")
    init.__annotations__ = dict(cls.__init__.__annotations__)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    setattr(cls, "__init__", init)  # noqa: B010 - replacing a method; `cls.__init__ =` is an error to mypy
    return cls


def _names(function: Any) -> tuple[str, ...]:
    code = function.__code__
    names: tuple[str, ...] = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    return names


def _source(cls: type, fields: tuple[dataclasses.Field[Any], ...], namespace: dict[str, Any]) -> str:
    """The text of the `__init__`: the parameters as the dataclass orders them, then one slot store
    per field (defaults and factories resolved as the dataclass would)."""
    positional = [f for f in fields if f.init and not f.kw_only]
    keyword = [f for f in fields if f.init and f.kw_only]
    params = [_param(f, namespace) for f in positional]
    if keyword:
        params += ["*", *(_param(f, namespace) for f in keyword)]
    body = []
    for f in fields:
        slot = _slot(cls, f.name)
        namespace[f"_set_{f.name}"] = slot.__set__
        value = f.name
        if f.default_factory is not dataclasses.MISSING:
            namespace[f"_make_{f.name}"] = f.default_factory
            value = f"_make_{f.name}() if {f.name} is _FACTORY else {f.name}" if f.init else f"_make_{f.name}()"
        elif not f.init:
            if f.default is dataclasses.MISSING:
                continue  # the dataclass leaves such a slot unset too
            namespace[f"_default_{f.name}"] = f.default
            value = f"_default_{f.name}"
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


def _slot(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    raise TypeError(f"{cls.__name__}.{name} has no slot")
