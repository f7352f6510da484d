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

from omk.errors import InputError
from omk.records.document import ReportDocument
from omk.report.html_report import render_html
from omk.report.junit import render_junit
from omk.report.markdown import render_markdown
from omk.report.terminal import print_summary

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


@pytest.mark.parametrize("name", ["factory", "experiment", "pairwise-votes", "old-layout", "bundled", "two-targets"])
def test_any_edit_renders_or_is_one_located_error(name):
    data = json.loads((CORPUS / name / "report.json").read_text(encoding="utf-8"))
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
    assert rendered and refused  # both kinds of edit happened
