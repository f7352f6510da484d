"""`@record` makes frozen dataclasses that behave as `@dataclass(frozen=True, slots=True)` ones."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import FrozenInstanceError, dataclass, field

import pytest

from omk.core.frozen import is_frozen, record
from omk.records import AssertionResult, SampleResult, Scores, ToolCall, Trace, TurnResult
from omk.scoring.digest import Digest


def _shape(kind: str) -> type:
    class Shape:
        name: str
        sides: tuple[int, ...] = field(default_factory=tuple)
        label: str = "plain"
        area: float = field(default=0.0, init=False)
        note: str = field(default="", compare=False, repr=False)
        colour: str = field(default="red", kw_only=True)

        def __post_init__(self) -> None:
            object.__setattr__(self, "label", self.label.upper())

    return record(Shape) if kind == "record" else dataclass(frozen=True, slots=True)(Shape)


CALLS = [(("a",), {}), (("a", (3,), "x"), {"colour": "blue"}), ((), {"name": "b", "label": "y"}), (("c",), {"note": "n"})]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_builds_compares_hashes_and_shows_as_the_dataclass(args: tuple, kwargs: dict) -> None:
    plain, made = _shape("dataclass"), _shape("record")
    a, b = plain(*args, **kwargs), made(*args, **kwargs)
    assert [getattr(a, f.name) for f in dataclasses.fields(a)] == [getattr(b, f.name) for f in dataclasses.fields(b)]
    assert repr(a) == repr(b)
    assert b == made(*args, **kwargs)
    assert hash(b) == hash(made(*args, **kwargs))
    assert b == dataclasses.replace(b, note="other")  # a field with compare=False is not compared
    assert b != dataclasses.replace(b, name="other")
    assert b != a  # another class is never equal
    assert dataclasses.asdict(b) == dataclasses.asdict(a)


def test_same_parameters_frozen_and_copied() -> None:
    plain, made = _shape("dataclass"), _shape("record")
    assert str(inspect.signature(plain)) == str(inspect.signature(made))
    one = made("a")
    assert is_frozen(made)
    assert made.__slots__ == plain.__slots__
    with pytest.raises(FrozenInstanceError):
        one.name = "b"
    with pytest.raises(FrozenInstanceError):
        del one.name
    assert dataclasses.replace(one, name="z") == made("z")
    assert copy.copy(one) == one
    assert copy.deepcopy(one) == one
    with pytest.raises(TypeError):
        made()  # a required field is still required
    with pytest.raises(TypeError):
        made("a", (), "x", "", "blue")  # a keyword-only field stays keyword-only


def test_recursive_repr_and_own_methods_kept() -> None:
    @record
    class Node:
        items: list[object] = field(default_factory=list)

        def __eq__(self, other: object) -> bool:
            return other == "any"

        __hash__ = object.__hash__

    node = Node()
    node.items.append(node)
    assert repr(node).endswith("Node(items=[...])")
    assert node == "any"
    assert hash(node) == object.__hash__(node)


def test_identity_records_and_refusals() -> None:
    @record(eq=False)
    class Handle:
        name: str

    assert Handle("a") != Handle("a")
    assert len({Handle("a"), Handle("a")}) == 2

    class WithInitVar:
        x: int
        scale: dataclasses.InitVar[int] = 1

    with pytest.raises(TypeError):
        record(WithInitVar)


def test_pickles() -> None:
    result = Scores(fact=4.0, composite=4.0)
    assert pickle.loads(pickle.dumps(result)) == result


@pytest.mark.parametrize("cls", [AssertionResult, SampleResult, Scores, ToolCall, Trace, TurnResult, Digest])
def test_the_per_sample_records_store_through_their_slots(cls: type) -> None:
    assert "_set_" in " ".join(cls.__init__.__code__.co_names)  # no object.__setattr__ by name
    assert is_frozen(cls)


def test_own_eq_alone_is_hashed_by_fields_as_the_dataclass_does() -> None:
    def shape(kind: str) -> type:
        class Pair:
            a: int
            b: int = 0

            def __eq__(self, other: object) -> bool:
                return type(other) is type(self) and self.a == other.a  # type: ignore[attr-defined]

        return record(Pair) if kind == "record" else dataclass(frozen=True, slots=True)(Pair)

    plain, made = shape("dataclass"), shape("record")
    assert plain.__hash__ is not None
    assert made.__hash__ is not None
    assert hash(made(1, 2)) == hash(made(1, 2))
    assert made(1, 2) == made(1, 3)
