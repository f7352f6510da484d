"""Every format renders the corpus (tests/fixtures/reports/: real runs of the bundled samples, a
failing replay, a judged run, repeats, M365, Big Sky, an experiment with --require, two targets
with the pairwise judge, and built reports including one from before experiments and a rerun
with answers from the response cache) byte for byte
as committed, in English and Chinese, from report.json alone, and `omk report` writes the same
files. tests/report_corpus.py says how the corpus was made and how to rebuild it."""

from __future__ import annotations

import os

import pytest
from cli_support import run_omk
from report_corpus import CORPUS, ROOT, render

FOLDERS = sorted(p.name for p in CORPUS.iterdir() if (p / "report.json").is_file())


def test_the_corpus_has_every_kind_of_report():
    assert {"bundled", "replay-failing", "judged", "repeats", "m365", "bigsky", "experiment", "two-targets", "old-layout", "cached"} <= set(FOLDERS)


@pytest.mark.parametrize("name", FOLDERS)
def test_every_format_renders_as_committed(name):
    folder = CORPUS / name
    for file, text in render(folder).items():
        expected = (folder / file).read_bytes().decode("utf-8")
        assert text == expected, f"{name}/{file} differs from what is committed"


@pytest.mark.parametrize("name", ["experiment", "old-layout", "judged"])
def test_omk_report_writes_the_committed_files(tmp_path, name):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMK_")}
    proc = run_omk(
        "report", str(CORPUS / name), "--format", "md,html,junit", "--lang", "zh", "--out", str(tmp_path),
        cwd=ROOT, base=env, drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for written, committed in (("summary.md", "summary.zh.md"), ("report.html", "report.zh.html"), ("junit.xml", "junit.xml")):
        assert (tmp_path / written).read_bytes() == (CORPUS / name / committed).read_bytes(), written
