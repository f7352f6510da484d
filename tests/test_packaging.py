"""The wheel omk builds into carries every file of the package that is not Python (the samples'
JSON schema, the HTML report's style sheets and scripts, py.typed), and omk installed from it
writes a report.html with them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built by pip from a copy of the sources (the build leaves its folders there)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "omk", src / "omk", ignore=shutil.ignore_patterns("__pycache__"))
    cmd = [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--quiet", "-w", str(tmp / "dist")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (built,) = (tmp / "dist").glob("omk-*.whl")
    return built


def data_files() -> set[str]:
    """Every file under omk/ that is not Python source, as a wheel names it."""
    return {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "omk").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    }


def test_the_wheel_carries_every_data_file(wheel):
    expected = data_files()
    assert {
        "omk/py.typed",
        "omk/schema/eval-samples.schema.json",
        *(f"omk/report/assets/{name}" for name in ("report.css", "report.js", "paged.css", "paged.js", "experiment.css", "experiment.js")),
    } <= expected
    names = set(zipfile.ZipFile(wheel).namelist())
    assert expected - names == set(), "in omk/ but not in the wheel (add them to [tool.setuptools.package-data])"


def test_omk_installed_from_the_wheel_writes_report_html(wheel, tmp_path):
    site = tmp_path / "site"
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--no-index", "--target", str(site), str(wheel)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    script = (
        "import sys, omk\n"
        "from omk.report.html_report import render_html\n"
        "from report_factory import make_report\n"
        "print(omk.__file__)\n"
        "sys.stdout.write(render_html(make_report()))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMK_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT / "tests")])
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    where, page = proc.stdout.split("\n", 1)
    assert Path(where).is_relative_to(site)  # omk from the wheel, not from the sources
    from omk.report.assets import text

    assert f"<style>{text('report.css')}</style>" in page
    assert f"<script>{text('report.js')}</script>" in page
