"""The short failure lines shared by the terminal, JUnit, Markdown and HTML reports."""

from __future__ import annotations

import asyncio

from helpers import make_spec

from omk.assertions.context import CheckContext
from omk.assertions.evaluate import evaluate
from omk.records import Trace
from omk.records.result import AssertionResult
from omk.report.reasons import failed_assertions
from omk.samples.model import Sample


def _results(specs, output="plain answer"):
    ctx = CheckContext(sample=Sample(sample_id="s", prompt="p"), output=output, trace=Trace())
    return [AssertionResult.read(r.to_json()) for r in asyncio.run(evaluate(specs, ctx))]


def test_a_not_that_really_inverted_says_so():
    [line] = failed_assertions(_results([make_spec({"type": "contains", "value": "plain", "not": True})]))
    assert line.startswith("not contains 'plain'")
    assert "(inverted by not)" in line


def test_an_error_under_not_is_not_called_an_inversion(tmp_path):
    hook = tmp_path / "boom.py"
    hook.write_text("def check(output, ctx):\n    raise RuntimeError('boom')\n", encoding="utf-8")
    spec = make_spec({"type": "custom", "fn": str(hook), "not": True})
    [result] = _results([spec])
    assert result.status == "failed"
    assert result.error is True
    [line] = failed_assertions([result])
    assert "boom" in line
    assert "inverted" not in line
