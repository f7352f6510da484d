"""Text from outside reaches the terminal as plain text: never rich markup, never a raw escape.

The scan: the CLI and the report code build rich tables, panels and consoles only through
omk/report/plain.py, call no `Text.from_markup`, and pass no interpolated string (an f-string, a
`%` or a `.format`) to rich's print, a table's row, column or title, a `Text` or the built-in
print, unless it goes through `plain` or `for_terminal` first. Each finding is listed as
file:line.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_support import run_omk

ROOT = Path(__file__).resolve().parent.parent
SCANNED = sorted([*(ROOT / "omk" / "cli").glob("*.py"), *(ROOT / "omk" / "report").glob("*.py"), ROOT / "omk" / "runner" / "progress.py"])
HELPER = ROOT / "omk" / "report" / "plain.py"
SAFE = {"plain", "for_terminal", "escaped"}  # calls that make text plain
SINK_METHODS = {"print", "log", "rule", "add_row", "add_column", "assemble"}
SINK_CALLS = {"Text", "Table", "PlainTable", "Panel", "panel"}
MADE_ONLY_IN_HELPER = {"Console", "Panel", "from_markup", "from_ansi", "render_markup"}
RICH_TABLE = ("rich.table", "Table")


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _interpolated(node: ast.expr) -> bool:
    """Whether `node` builds a string from values without making it plain first."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
        strings = isinstance(node.left, ast.Constant | ast.JoinedStr) and isinstance(getattr(node.left, "value", ""), str)
        return strings or _interpolated(node.left) or _interpolated(node.right)
    if isinstance(node, ast.Call):
        return _name(node.func) == "format" or (_name(node.func) == "join" and any(_interpolated(a) for a in node.args))
    if isinstance(node, ast.IfExp):
        return _interpolated(node.body) or _interpolated(node.orelse)
    if isinstance(node, ast.Starred):
        return _interpolated(node.value)
    if isinstance(node, ast.GeneratorExp | ast.ListComp):
        return _interpolated(node.elt)
    return False


def findings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(ROOT)
    found = []
    for node in ast.walk(tree):
        table = isinstance(node, ast.ImportFrom) and node.module == RICH_TABLE[0] and any(a.name == "Table" for a in node.names)
        if table and path != HELPER:
            found.append(f"{where}:{node.lineno}: rich's Table (use omk.report.plain.PlainTable)")
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        if name in MADE_ONLY_IN_HELPER and path != HELPER:
            found.append(f"{where}:{node.lineno}: {name} outside omk/report/plain.py")
        builtin_print = name == "print" and isinstance(node.func, ast.Name)  # a line of the command's own
        if name in SAFE or not (name in SINK_CALLS or builtin_print or (isinstance(node.func, ast.Attribute) and name in SINK_METHODS)):
            continue
        values = [*node.args, *(k.value for k in node.keywords if k.arg in (None, "title", "caption", "header", "subtitle"))]
        if any(_interpolated(v) for v in values):
            found.append(f"{where}:{node.lineno}: an interpolated string passed to {name}() without plain()/for_terminal()")
    return found


def test_rich_gets_no_interpolated_text_and_tables_only_through_the_plain_helper() -> None:
    found = [line for path in SCANNED for line in findings(path)]
    assert not found, "text reaches rich without plain()/for_terminal():\n" + "\n".join(found)


HOSTILE = ("[/x]", "[bold red]", "\x1b[2J", "\u202e", ":warning:")


def _omk(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1"}
    return run_omk(*args, cwd=cwd, base=env, drop=(), columns=None, timeout=120)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_markup_escapes_and_bidi_controls_from_samples_and_outputs_are_shown_as_text(tmp_path: Path, lang: str) -> None:
    samples = [
        {"sample_id": f"id{i}{h}", "category": f"cat{i}{h}", "capability": [f"cap{i}{h}"], "prompt": "hi",
         "assertions": [{"type": "contains", "value": f"want{h}"}]}
        for i, h in enumerate(HOSTILE)
    ]  # fmt: skip
    (tmp_path / "s.json").write_text(json.dumps(samples), encoding="utf-8")
    replies = [json.dumps({"sample_id": s["sample_id"], "output": f"said {h} [/]"}) for s, h in zip(samples, HOSTILE, strict=True)]
    (tmp_path / "r.jsonl").write_text("\n".join(replies) + "\n", encoding="utf-8")
    runs = [
        _omk(["eval", "s.json", "--target", "replay:r.jsonl", "--out", "run", "--lang", lang], tmp_path),
        _omk(["report", "run", "--lang", lang], tmp_path),
        _omk(["doctor", "s.json", "--lang", lang], tmp_path),
    ]
    for proc in runs:
        shown = proc.stdout + proc.stderr
        assert "Traceback" not in shown and "MarkupError" not in shown, shown
        assert "\x1b" not in shown and "\u202e" not in shown and "⚠" not in shown, ascii(shown)
    eval_out = runs[0].stdout
    assert runs[0].returncode == 1, runs[0].stderr
    for i, h in enumerate(HOSTILE):  # every one is shown, as written (escaped where it is a control)
        shown = h.replace("\x1b", "\\x1b").replace("\u202e", "\\u202e")
        for word in (f"id{i}", f"cat{i}", f"cap{i}"):
            assert word + shown in eval_out, (word + shown, eval_out)
    assert "said [bold red] [/]" in eval_out
    assert "said \\x1b[2J [/]" in eval_out


def test_an_invented_skill_name_and_a_skill_heading_are_text_on_any_rich_console() -> None:
    """The triggering report (a skill name an agent made up) and the ablation table (a SKILL.md
    heading, the skill's name) on rich's own Console, markup on: the report code hands rich plain
    text whatever console it is given."""
    from io import StringIO

    from rich.console import Console

    from omk.records.experiment_block import Ablation, AblationPart
    from omk.records.triggering import TriggerCase
    from omk.report.ablation import print_table
    from omk.report.triggering import terminal_parts
    from omk.scoring.triggering import triggering

    made_up = "pdf[/x]\x1b[2J\u202e"
    cases = [TriggerCase("pdf", True, False, "s1", 0, None, (made_up,))]
    trig = triggering(cases, ("pdf",))
    part = AblationPart("v1", "section", "Rules [bold red]\x1b[31m", 12, 0.5, 0.1, 0.9, "PROGRESS", False)
    console = Console(file=StringIO(), width=200, force_terminal=False, color_system=None)
    for renderable in terminal_parts(trig, (), "en"):
        console.print(renderable)
    print_table(Ablation("tone[/]\x1b[2J", 0.1, (part,)), console, "en")
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b" not in shown and "\u202e" not in shown, ascii(shown)
    assert "pdf[/x]\\x1b[2J\\u202e" in shown
    assert "Rules [bold red]\\x1b[31m" in shown
    assert "tone[/]\\x1b[2J" in shown
