"""`quick_init`: the faster `__init__` of the records built per sample behaves as the dataclass's own."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import FrozenInstanceError, InitVar, dataclass, field

import pytest

from omk.records import AssertionResult, SampleResult, Scores, ToolCall, Trace, TurnResult
from omk.records.quick import quick_init
from omk.scoring.digest import Digest


def _shape(quick: bool) -> type:
    @dataclass(frozen=True, slots=True)
    class Shape:
        name: str
        sides: list[int] = field(default_factory=list)
        label: str = "plain"
        area: float = field(default=0.0, init=False)
        colour: str = field(default="red", kw_only=True)

        def __post_init__(self) -> None:
            object.__setattr__(self, "label", self.label.upper())

    return quick_init(Shape) if quick else Shape


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [(("a",), {}), (("a", [3], "x"), {"colour": "blue"}), ((), {"name": "b", "label": "y"}), (("c",), {"sides": [1, 2]})],
)
def test_builds_what_the_dataclass_builds(args: tuple, kwargs: dict) -> None:
    plain, quick = _shape(False), _shape(True)
    a, b = plain(*args, **kwargs), quick(*args, **kwargs)
    assert [getattr(a, f.name) for f in dataclasses.fields(a)] == [getattr(b, f.name) for f in dataclasses.fields(b)]
    assert repr(a).replace("Shape", "") == repr(b).replace("Shape", "")
    assert b.label == b.label.upper()  # __post_init__ ran


def test_same_parameters_and_still_frozen() -> None:
    plain, quick = _shape(False), _shape(True)
    assert list(inspect.signature(plain).parameters) == list(inspect.signature(quick).parameters)
    assert str(inspect.signature(plain)) == str(inspect.signature(quick))
    one = quick("a")
    assert one.sides is not quick("a").sides  # the factory runs per instance
    with pytest.raises(FrozenInstanceError):
        one.name = "b"  # type: ignore[misc]
    assert dataclasses.replace(one, name="z") == quick("z")
    with pytest.raises(TypeError):
        quick()  # a required field is still required
    with pytest.raises(TypeError):
        quick("a", [], "x", "blue")  # a keyword-only field stays keyword-only


def test_refuses_what_it_cannot_rebuild() -> None:
    @dataclass(slots=True)
    class Open:
        x: int

    @dataclass(frozen=True)
    class NoSlots:
        x: int

    @dataclass(frozen=True, slots=True)
    class WithInitVar:
        x: int
        scale: InitVar[int] = 1

        def __post_init__(self, scale: int) -> None:
            object.__setattr__(self, "x", self.x * scale)

    for cls in (Open, NoSlots, WithInitVar):
        with pytest.raises(TypeError):
            quick_init(cls)


@pytest.mark.parametrize("cls", [AssertionResult, SampleResult, Scores, ToolCall, Trace, TurnResult, Digest])
def test_the_per_sample_records_use_it_with_their_dataclass_parameters(cls: type) -> None:
    assert cls.__init__.__code__.co_filename == "<string>"
    assert "_set_" in " ".join(cls.__init__.__code__.co_names)  # stores through the slots
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    assert list(inspect.signature(cls).parameters) == names
