"""Every numeric option of every command has a range: a value outside it (0, negative, nan, inf,
1e-300, 1e308, a number of 5,000 digits) is one line naming the option, exit 2, no traceback;
a value at the edge of the range gives a result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cli_support import run_omk

# (command line before the option, option): every numeric option omk has.
OPTIONS = [
    (("eval", "s.yaml"), "--concurrency"),
    (("eval", "s.yaml"), "--timeout"),
    (("eval", "s.yaml"), "--retries"),
    (("eval", "s.yaml"), "--repeat"),
    (("eval", "s.yaml"), "--judge-repeat"),
    (("eval", "s.yaml"), "--budget-usd"),
    (("eval", "s.yaml"), "--budget-per-sample-usd"),
    (("eval", "s.yaml"), "--threshold"),
    (("eval", "s.yaml"), "--trivial"),
    (("eval", "s.yaml"), "--max-cost-increase"),
    (("eval", "s.yaml"), "--seed"),
    (("power", "run"), "--effect"),
    (("diff", "a", "b"), "--trivial"),
    (("serve-model", "script.yaml"), "--port"),
    (("view",), "--port"),
    (("sample", "skill"), "-n"),
    (("sample", "skill"), "--triggers"),
    (("sample", "skill"), "--tasks"),
    (("sample", "skill"), "--concurrency"),
    (("sample", "skill"), "--timeout"),
    (("sample", "--from-session"), "--limit"),
    (("evolve", "skill"), "--rounds"),
    (("evolve", "skill"), "--candidates"),
    (("evolve", "skill"), "--repeat"),
    (("evolve", "skill"), "--seed"),
    (("evolve", "skill"), "--budget-usd"),
    (("observe",), "--limit"),
]
HUGE = "9" * 5000
BAD = ["nan", "inf", "-inf", "-1", "1e308", "-1e-300", HUGE, "ten"]


def omk_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_omk(
        *args,
        cwd=cwd, drop=("OMK_TARGET", "OMK_JUDGE", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"), columns=200, timeout=120,
    )  # fmt: skip


def _refused_in_one_line(run: subprocess.CompletedProcess, option: str) -> None:
    assert run.returncode == 2, (run.returncode, run.stdout[-500:], run.stderr[-2000:])
    assert "Traceback" not in run.stderr
    errors = run.stderr.splitlines()
    assert len(errors) == 1 and f"error: argument {option}: " in errors[0], run.stderr
    assert len(errors[0]) < 300, errors[0]  # a number of 5,000 digits is not echoed whole


@pytest.mark.parametrize(("command", "option"), OPTIONS, ids=[f"{c[0]}{o}" for c, o in OPTIONS])
def test_every_numeric_option_refuses_values_outside_its_range_in_one_line(tmp_path, command, option):
    for value in BAD:
        _refused_in_one_line(omk_cli(*command, f"{option}={value}", cwd=tmp_path), option)


@pytest.mark.parametrize(
    ("command", "option", "value"),
    [
        (("eval", "s.yaml"), "--timeout", "1e9"),
        (("eval", "s.yaml"), "--concurrency", "1000000000"),
        (("eval", "s.yaml"), "--repeat", "10000000000"),
        (("eval", "s.yaml"), "--retries", "1000000"),
        (("eval", "s.yaml"), "--seed", str(2**64)),
        (("power", "run"), "--effect", "1e-8"),
        (("power", "run"), "--effect", "5"),
        (("serve-model", "script.yaml"), "--port", "65536"),
        (("sample", "skill"), "-n", "1000000000000"),
        (("sample", "skill"), "--tasks", "1000000000000"),
        (("sample", "--from-session"), "--limit", "0"),
    ],
)
def test_values_past_the_edges_are_refused(tmp_path, command, option, value):
    _refused_in_one_line(omk_cli(*command, option, value, cwd=tmp_path), option)


AGENT = """
import json, sys
request = json.loads(sys.stdin.readline())
words = {"a": "apple", "b": "banana", "c": "cherry"}
print(json.dumps({"type": "response", "output": " ".join(v for k, v in words.items() if k in request["prompt"])}), flush=True)
"""


def test_power_refuses_a_tiny_effect_and_every_range_admits_its_edges(tmp_path):
    """A run with a spread between samples: `omk power --effect 1e-8` (an OverflowError before)
    is one line; at both ends of its range, and `omk eval` with its numeric options at theirs,
    each finishes with a result."""
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    prompts = ["a", "ab", "abc", "b", "c", "bc"]
    samples = [
        {"sample_id": f"s{i}", "prompt": p, "assertions": [{"type": "contains", "value": w} for w in ("apple", "banana", "cherry")]}
        for i, p in enumerate(prompts)
    ]
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    edges = ("--timeout", "86400", "--concurrency", "1000", "--retries", "100", "--seed", str(2**63 - 1), "--budget-usd", "1e9")
    run = omk_cli("eval", "s.yaml", "--target", f"cmd:{sys.executable} agent.py", "--no-judge", "--no-cache", "--out", "run", *edges, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    tiny = omk_cli("eval", "s.yaml", "--target", f"cmd:{sys.executable} agent.py", "--no-judge", "--no-cache", "--out", "r2", "--timeout", "1e-300", cwd=tmp_path)
    assert tiny.returncode == 1 and "Traceback" not in tiny.stderr, tiny.stdout + tiny.stderr  # every call timed out: errored samples
    _refused_in_one_line(omk_cli("power", "run", "--effect", "1e-8", cwd=tmp_path), "--effect")
    for effect in ("0.001", "4"):
        power = omk_cli("power", "run", "--effect", effect, "--json", cwd=tmp_path)
        assert power.returncode == 0 and "Traceback" not in power.stderr, power.stderr
        (needs,) = json.loads(power.stdout)
        assert needs["effect"] == float(effect)
        assert needs["between_sd"] > 0
        assert all(isinstance(row["samples"], int) and row["samples"] >= 2 for row in needs["samples_needed"])


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ("concurrency: 100000000000", "concurrency: must be from 1 to 1,000"),
        ("timeout: 1.0e+308", "timeout: must be greater than 0 and at most 86,400 seconds"),
        ("retries: 1000000", "retries: must be from 0 to 100"),
        ("url_timeout: 1.0e+308", "url_timeout: must be greater than 0 and at most 86,400 seconds"),
        ("hook_timeout: 100000", "hook_timeout: must be greater than 0 and at most 86,400 seconds"),
        ("regex_timeout: 100000", "regex_timeout: must be greater than 0 and at most 86,400 seconds"),
        ("url_max_bytes: 10000000000000", "url_max_bytes: must be from 1 to 1,073,741,824 (bytes)"),
        ("max_output_bytes: 10000000000000", "max_output_bytes: must be from 1 to 1,073,741,824 (bytes)"),
    ],
)
def test_omk_yaml_holds_the_same_numbers_to_the_same_ranges(tmp_path, setting, words):
    """omk.yaml's numbers meet the command line's ranges (`concurrency: 100000000000` hung the run)."""
    (tmp_path / "s.yaml").write_text("samples:\n  - {sample_id: a, prompt: hi, assertions: [{type: contains, value: x}]}\n", encoding="utf-8")
    (tmp_path / "omk.yaml").write_text(setting + "\n", encoding="utf-8")
    run = omk_cli("eval", "s.yaml", "--target", "cmd:true", "--no-judge", "--no-cache", "--out", "run", cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stdout + run.stderr
    assert run.stderr.strip().splitlines() == [f"omk.yaml:1: {words} (got {setting.split(': ')[1].replace('1.0e+308', '1e+308')})"], run.stderr


def test_the_list_above_is_every_numeric_option_the_parser_has():
    """A new numeric option cannot skip its range: every option whose value is converted (not a
    plain string or a choice) converts through the one range-checked type, and is in OPTIONS."""
    import argparse

    from omk.cli.main import Number, build_parser

    def subparsers(parser: argparse.ArgumentParser):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                yield from action.choices.items()

    typed = set()
    for name, sub in subparsers(build_parser()):
        for action in sub._actions:
            if action.type is not None and action.option_strings and not isinstance(action.type, Number):
                typed.add((name, action.option_strings[-1], getattr(action.type, "__name__", repr(action.type))))
            if isinstance(action.type, Number):
                assert any(c[0] == name and o in action.option_strings for c, o in OPTIONS), (name, action.option_strings)
    converters = {t for _, _, t in typed}
    assert converters <= {"str", "_allow_entry", "Path"}, sorted(typed)
