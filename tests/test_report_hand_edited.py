"""A report.json edited by hand (any field of a real report replaced by a value of another type,
or removed) either reads into the typed report and renders in every format, or is one InputError
naming the file and the field: never a traceback. Seeded, so a failure reproduces."""

from __future__ import annotations

import json
import random
from io import StringIO

import pytest
from report_corpus import CORPUS
from rich.console import Console

from omk.core.errors import InputError
from omk.records.document import Bounds, Capability, ReportDocument
from omk.records.result import FileChange, WorkspaceChanges
from omk.records.triggering import TriggerCase
from omk.report.html_report import render_html
from omk.report.junit import render_junit
from omk.report.markdown import render_markdown
from omk.report.terminal import print_summary
from omk.scoring.triggering import triggering

REPLACEMENTS = [None, "text", 7, 2.5, True, [], [1], {}, {"x": 1}]
DROP = object()


def leaves(value, path=()):
    """Every (path, value) in a JSON document, containers included."""
    yield path, value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield from leaves(child, (*path, key))


def edited(data, path, new):
    data = json.loads(json.dumps(data))
    node = data
    for key in path[:-1]:
        node = node[key]
    if new is DROP:
        node.pop(path[-1]) if isinstance(node, dict) else node.pop(path[-1])
    else:
        node[path[-1]] = new
    return data


def render_all(doc: ReportDocument) -> None:
    for lang in ("en", "zh"):
        render_markdown(doc, lang)
        render_html(doc, lang)
        print_summary(doc, Console(file=StringIO(), width=100), lang)
    render_junit(doc)


def with_new_blocks() -> dict:
    """The repeats report (pass@k) with the newer blocks added as omk writes them: triggering, and
    a trace.workspace on every result."""
    data = json.loads((CORPUS / "repeats" / "report.json").read_text(encoding="utf-8"))
    cases = [TriggerCase("pdf", True, True, "a", 0, None, ()), TriggerCase("pdf", False, True, "b", 1, None, ("docx",)),
             TriggerCase("docx", True, False, "c", 0, None, ("pdf",))]  # fmt: skip
    trig = triggering(cases, ("pdf", "docx"))
    assert trig is not None
    data["triggering"] = trig.to_json()
    wilson, boot = Bounds(0.4, 0.9, 0.95, "wilson"), Bounds(3.1, 4.6, 0.95, "expanded", 2000, "omk-summary")
    data["summary"]["capabilities"] = [
        Capability("search", 3, 6, 4, 2, 1, 0.6667, 3.9, wilson, boot).to_json(),
        Capability("writing", 1, 2, 2, 0, 0, 1.0, 5.0).to_json(),  # one sample: no interval
    ]
    changes = WorkspaceChanges(created=(FileChange("notes.md", 12, "# notes"),), deleted=(FileChange("old.txt", 3),))
    for result in data["results"]:
        result.setdefault("trace", {})["workspace"] = changes.to_json()
    doc = ReportDocument.from_dict(data, "run/report.json")
    assert doc.triggering is not None
    assert len(doc.summary.capabilities) == 2
    return data


def corpus_report(name: str) -> dict:
    if name == "new-blocks":
        return with_new_blocks()
    return json.loads((CORPUS / name / "report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["factory", "experiment", "pairwise-votes", "old-layout", "bundled", "two-targets", "new-blocks"])
def test_any_edit_renders_or_is_one_located_error(name):
    data = corpus_report(name)
    paths = [p for p, _ in leaves(data) if p]
    rng = random.Random(name)
    rendered = refused = 0
    for path in rng.sample(paths, min(150, len(paths))):
        new = rng.choice([*REPLACEMENTS, DROP])
        try:
            doc = ReportDocument.from_dict(edited(data, path, new), "run/report.json")
        except InputError as exc:
            message = str(exc)
            assert message.startswith("run/report.json: ") and "\n" not in message, message
            refused += 1
            continue
        try:
            render_all(doc)
        except Exception as exc:  # noqa: BLE001 - the point: nothing else may escape
            pytest.fail(f"{name}: {'.'.join(map(str, path))} = {new!r}: {type(exc).__name__}: {exc}")
        rendered += 1
    assert rendered
    assert refused  # both kinds of edit happened


@pytest.mark.parametrize("block", ["triggering", "repeats", "workspace", "capabilities"])
def test_every_field_of_the_newer_blocks_edited_renders_or_is_one_located_error(block):
    """Fields of the triggering block, the repeats block (pass@k) and a trace.workspace (up to 60
    of each, seeded), replaced by a value of another type or removed."""
    data = with_new_blocks()
    prefix = {"workspace": ("results", 0, "trace", "workspace"), "capabilities": ("summary", "capabilities")}.get(block, (block,))
    paths = [p for p, _ in leaves(data) if p[: len(prefix)] == prefix and len(p) > len(prefix) - (block == "workspace")]
    rng = random.Random(block)
    for path in rng.sample(paths, min(60, len(paths))):
        new = rng.choice([*REPLACEMENTS, DROP])
        try:
            doc = ReportDocument.from_dict(edited(data, path, new), "run/report.json")
        except InputError as exc:
            assert str(exc).startswith("run/report.json: ") and "\n" not in str(exc), str(exc)
            continue
        try:
            render_all(doc)
        except Exception as exc:  # noqa: BLE001 - the point: nothing else may escape
            pytest.fail(f"{'.'.join(map(str, path))} = {new!r}: {type(exc).__name__}: {exc}")
