"""The objects omk builds have what the protocols at the package boundaries promise: the same
methods, async where the protocol's are, with the same parameters."""

from __future__ import annotations

import inspect
from typing import Protocol

import pytest

from omk.assertions.context import AssertionJudge, Hooks
from omk.assertions.hooks import HookRunner
from omk.judge import Judge
from omk.judge.judge import JudgePanel as LLMJudge
from omk.targets.base import Target
from omk.targets.cmd import CmdTarget
from omk.targets.openai import OpenAITarget
from omk.targets.replay import ReplayTarget


def protocol_members(protocol: type) -> dict[str, object]:
    return {
        name: value
        for klass in protocol.__mro__
        if klass is not Protocol and getattr(klass, "_is_protocol", False)
        for name, value in vars(klass).items()
        if callable(value) and not name.startswith("_")
    }


def mismatches(protocol: type, implementation: type) -> list[str]:
    problems = []
    for name, wanted in protocol_members(protocol).items():
        got = getattr(implementation, name, None)
        if got is None:
            problems.append(f"{name}: missing")
            continue
        if inspect.iscoroutinefunction(wanted) != inspect.iscoroutinefunction(got):
            problems.append(f"{name}: async differs")
        want_params = list(inspect.signature(wanted).parameters)
        got_params = list(inspect.signature(got).parameters)
        if want_params != got_params:
            problems.append(f"{name}: parameters {got_params}, expected {want_params}")
    return problems


@pytest.mark.parametrize(
    "protocol, implementation",
    [
        (Judge, LLMJudge),
        (AssertionJudge, LLMJudge),
        (Hooks, HookRunner),
        (Target, OpenAITarget),
        (Target, CmdTarget),
        (Target, ReplayTarget),
    ],
)
def test_the_implementation_has_what_the_protocol_promises(protocol, implementation):
    assert protocol_members(protocol), "the protocol lists no method"
    assert mismatches(protocol, implementation) == []


def test_a_missing_or_different_method_is_found():
    class Half:
        async def grade(self, sample, output):  # parameters differ
            return None

        def close(self):  # not async
            return None

    problems = mismatches(Judge, Half)
    assert "describe: missing" in problems
    assert "close: async differs" in problems
    assert any(p.startswith("grade: parameters") for p in problems)
