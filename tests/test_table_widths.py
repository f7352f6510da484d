"""Every terminal table fits the terminal's width (80 and 120 columns) without breaking a word:
the real CLI runs over the bundled samples and the skills walkthrough with COLUMNS set, and each
line it prints is checked for its width (in cells) and each word on it against the words the same
command prints on a terminal wide enough for everything. A word cut to fit ends with an ellipsis;
a word folded over two lines (`capab` / `ility`, `announce-1.` / `5`) is not a word of the wide
output and fails."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import run_omk
from rich.cells import cell_len

from omk.report.plain import PlainConsole, PlainTable

ROOT = Path(__file__).resolve().parent.parent
BORDERS = re.compile(r"[│┃┏┓┗┛┡┩└┘┌┐━─╇╈┳┻┴┬╭╮╯╰┼╋├┤┣┫┠┨]")
NUMBER = re.compile(r"^[\[(]?[-+]?\$?\d+(\.\d+)?(%|ms|s)?[\]),;]*$")  # a timing, a cost (cached the second time) differs


def words(text: str) -> set[str]:
    return set(BORDERS.sub(" ", text).split())


def broken(narrow: str, wide: str, width: int) -> list[str]:
    """The lines wider than `width`, and the words of `narrow` that `wide` does not have."""
    too_wide = [line for line in narrow.splitlines() if cell_len(line) > width]
    known = words(wide)
    odd = sorted(w for w in words(narrow) - known if not w.endswith("…") and not NUMBER.match(w))
    return too_wide + odd


def run(args: list[str], cwd: Path, columns: int, env: dict[str, str] | None = None) -> str:
    environment = {**(env or os.environ), "COLUMNS": str(columns), "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    proc = run_omk(*args, cwd=cwd, base=environment, drop=(), columns=None, timeout=600)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc.stdout


def test_the_checker_finds_a_folded_word_and_a_long_line():
    wide = "│ capability │ announce-1.5 │\n"
    assert broken("│ capab │ announce-1. │\n│ ility │ 5           │\n", wide, 80) == ["announce-1.", "capab", "ility"]
    assert broken("│ capa… │ announce-1.5 │\n", wide, 80) == []
    assert broken("x" * 81, "x" * 81, 80) == ["x" * 81]


def test_a_table_too_narrow_for_its_words_leaves_out_the_columns_marked_to_go():
    table = PlainTable(title="t")
    table.add_column("skill")
    table.add_column("recall")
    table.add_column("fired when it must not", drop=1)
    table.add_row("release-notes", "1/1 100% [21%, 100%]", "announce-1.5 announce-2.0-candidate")
    from io import StringIO

    out = StringIO()
    PlainConsole(file=out, width=34, color_system=None).print(table)
    text = out.getvalue()
    assert "fired" not in text.split("\n", 1)[1].split("left out")[0]
    assert "left out to fit the width: fired when it must not" in " ".join(text.split())
    assert broken(text, "skill recall release-notes 1/1 100% [21%, 100%] t left out to fit the width: fired when it must not", 34) == [], text


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Callable[[list[str]], tuple[Path, str]]:
    """The command run once on a terminal wide enough for everything (`--out b`), in a copy of the
    samples (the paths printed stay short); the narrow runs of the same command, at each width,
    run in the same folder and are checked against its words."""
    done: dict[tuple[str, ...], tuple[Path, str]] = {}

    def run_wide(args: list[str]) -> tuple[Path, str]:
        if tuple(args) not in done:
            folder = tmp_path_factory.mktemp("widths")
            shutil.copytree(ROOT / "samples", folder / "samples")
            done[tuple(args)] = folder, run([*args, "--out", "b"], folder, 1000)
        return done[tuple(args)]

    return run_wide


def narrow_out(columns: int) -> str:
    """The narrow run's folder, one per width, named as long as the wide run's `b`."""
    return {80: "a", 120: "c"}[columns]


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("samples", ["samples/eval-samples.yaml", "samples/experiment/eval-samples.yaml"])
def test_the_bundled_samples_fit(wide: Callable[[list[str]], tuple[Path, str]], samples: str, columns: int):
    args = ["eval", samples, "--no-judge", "--seed", "7", "--no-cache"]
    folder, wide_text = wide(args)
    out = narrow_out(columns)
    narrow = run([*args, "--out", out], folder, columns)
    assert "──" in narrow or "━━" in narrow  # tables were printed
    assert broken(narrow, wide_text.replace("b/report.json", f"{out}/report.json"), columns) == [], narrow


def test_the_skills_walkthrough_fits_80_columns(repo_copy: Path, model_url: str):
    from claude_support import require_claude

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OMK_", "CLAUDE_"))}
    env.update({"ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "offline", "OMK_CLAUDE": require_claude(), "HOME": str(repo_copy)})
    args = ["eval", "samples/skills/eval-samples.yaml", "--no-judge"]
    narrow = run([*args, "--out", "a"], repo_copy, 80, env)
    wide = run([*args, "--out", "b"], repo_copy, 1000, env)
    assert "By capability" in narrow
    assert "Triggering" in narrow
    assert broken(narrow, wide.replace("b/report.json", "a/report.json"), 80) == [], narrow


@pytest.mark.parametrize("columns", [80, 120])
def test_an_ablation_fits_with_its_headers_and_verdicts_whole(wide: Callable[[list[str]], tuple[Path, str]], columns: int):
    """The experiment's Variants table and the Ablation table: at 80 columns they leave out the
    columns that matter least (the layers the line beneath repeats, the triggering changes), and
    no header, name or verdict is cut to `pas…` or `UNDERPOWER…`; the caption wraps between words."""
    args = ["eval", "samples/experiment/eval-samples.yaml", "--ablate", "samples/experiment/skills/support-tone", "--no-judge", "--seed", "7", "--no-cache"]
    folder, wide_text = wide(args)
    out = narrow_out(columns)
    narrow = run([*args, "--out", out], folder, columns)
    assert "Variants" in narrow
    assert "Ablation" in narrow
    known = wide_text.replace("b/report.json", f"{out}/report.json") + " left out to fit the width: judge, fact,"  # the notes under the narrowed tables
    assert broken(narrow, known, columns) == [], narrow
    assert [w for w in words(narrow) if w.endswith("…")] == [], narrow
    for header in ("variant", "role", "passed", "composite", "errored", "part", "kind", "contribution", "tokens", "verdict"):
        assert header in words(narrow), header
    assert "without-acme-support-tone" in words(narrow)
    assert "REGRESS" in words(narrow)
