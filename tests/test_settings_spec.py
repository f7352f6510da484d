"""The settings spec (omk/settings/spec.py) is the one place a setting is declared: the command
line's flags, omk.yaml's check, the Python API's keywords and the typed Settings are made from it.
A setting added to the spec as one line (here in a copy of the package) appears on all four faces,
typed, in the right order of precedence; the typed faces' fields are what the spec makes; and a
run reads its omk.yaml once."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from omk.settings import faces, spec

ROOT = Path(__file__).resolve().parent.parent
ADDED = spec.Setting(
    "sample_budget",
    (int,),
    "a setting the test adds",
    7,
    spec.Number(True, 1, 100),
    spec.Flag(metavar="N"),
    yaml=True,
    env="OMK_SAMPLE_BUDGET",
    api=spec.Api("sample_budget"),
)
# The same setting as the one line a developer adds to SETTINGS
LINE = (
    '    Setting("sample_budget", (int,), "a setting the test adds", 7, Number(True, 1, 100), Flag(metavar="N"), yaml=True,'
    ' env="OMK_SAMPLE_BUDGET", api=Api("sample_budget")),\n'
)


@pytest.fixture()
def added(monkeypatch: pytest.MonkeyPatch) -> spec.Setting:
    monkeypatch.setattr(spec, "SETTINGS", (*spec.SETTINGS, ADDED))
    monkeypatch.delenv("OMK_SAMPLE_BUDGET", raising=False)
    return ADDED


def test_a_setting_added_to_the_spec_is_a_flag_of_omk_eval(added):
    from omk.cli.main import build_parser

    assert build_parser().parse_args(["eval", "s.yaml", "--sample-budget", "9"]).sample_budget == 9
    with pytest.raises(SystemExit) as refused:  # the range holds on the command line
        build_parser().parse_args(["eval", "s.yaml", "--sample-budget", "101"])
    assert refused.value.code == 2


def test_a_setting_added_to_the_spec_is_an_omk_yaml_key_checked_with_its_line(added, tmp_path):
    from omk.core.errors import ConfigError
    from omk.settings.config import read_config

    (tmp_path / "omk.yaml").write_text("threshold: 3\nsample_budget: 5\n", encoding="utf-8")
    assert read_config(tmp_path / "omk.yaml")["sample_budget"] == 5
    (tmp_path / "omk.yaml").write_text("threshold: 3\nsample_budget: many\n", encoding="utf-8")
    with pytest.raises(ConfigError) as wrong_type:
        read_config(tmp_path / "omk.yaml")
    assert str(wrong_type.value) == f"{tmp_path / 'omk.yaml'}:2: sample_budget: must be int"
    (tmp_path / "omk.yaml").write_text("sample_budget: 500\n", encoding="utf-8")
    with pytest.raises(ConfigError) as out_of_range:
        read_config(tmp_path / "omk.yaml")
    assert str(out_of_range.value) == f"{tmp_path / 'omk.yaml'}:1: sample_budget: must be from 1 to 100 (got 500)"


def test_the_typed_faces_are_what_the_spec_makes():
    """Settings', EvalOptions' and RunOptions' fields are written from the spec; a setting added
    without running the writer fails here."""
    assert faces.stale() == [], "run: python -m omk.settings.faces"


def test_the_faces_take_each_setting_of_the_spec_by_its_own_type():
    from omk.api import RunOptions
    from omk.engine.options import EvalOptions
    from omk.settings.config import Settings

    made = {f.name: f.type for f in dataclasses.fields(Settings)}
    for setting in spec.SETTINGS:
        if setting.field is not None:
            assert made[setting.field] == faces.settings_type(setting), setting.name
    assert made["threshold"] == "float"
    assert made["judge"] == "list[str]"
    assert made["budget_usd"] == "float | None"
    assert made["skill"] == "str | list[str] | None"
    assert made["debias_length"] == "bool"
    defaults = Settings()
    assert (defaults.formats, defaults.debias_length, defaults.judge_off, defaults.threshold) == (["json"], True, False, 3.5)
    options = {f.name: f.type for f in dataclasses.fields(EvalOptions)}
    assert [options[n] for n in ("target", "no_judge", "treatment", "seed", "trivial", "pairwise")] == [
        "str | None", "bool", "list[str] | None", "int | None", "float | None", "bool | None",
    ]  # fmt: skip
    keywords = {s.api.keyword for s in spec.SETTINGS if s.api is not None}
    assert set(RunOptions.__annotations__) == keywords  # every keyword the API takes is typed
    typed = {name: hint.__forward_arg__ for name, hint in RunOptions.__annotations__.items()}  # as written
    assert typed["judge_repeat"] == "int | None"
    assert typed["urls"] == "bool"
    assert typed["target"] == "str | Target | None"


CHILD = """
import dataclasses, os, sys
from pathlib import Path
folder, target = Path(sys.argv[1]), sys.argv[2]
from omk.api import RunOptions, prepare
from omk.cli.main import build_parser
from omk.engine.options import EvalOptions
from omk.settings.config import Settings, load_settings

def budget(**keywords):
    evaluation = prepare(folder / "eval-samples.yaml", target=target, judge=False, cwd=folder, **keywords)
    return evaluation.settings.sample_budget  # a typed field

print("settings field:", {f.name: f.type for f in dataclasses.fields(Settings)}["sample_budget"])
print("option field:", {f.name: f.type for f in dataclasses.fields(EvalOptions)}["sample_budget"])
print("keyword:", RunOptions.__annotations__["sample_budget"].__forward_arg__)
print("default:", budget())
(folder / "omk.yaml").write_text("sample_budget: 5\\n", encoding="utf-8")
print("omk.yaml:", budget())
os.environ["OMK_SAMPLE_BUDGET"] = "6"
print("environment:", budget())
print("keyword given:", budget(sample_budget=3))
options = EvalOptions.from_mapping(vars(build_parser().parse_args(["eval", "--sample-budget", "9"])))
print("flag given:", load_settings([], folder, options.as_cli()).sample_budget)
"""


def test_a_setting_added_as_one_line_of_the_spec_is_on_all_four_faces_typed(project, tmp_path):
    """A copy of the package with one line added to SETTINGS and the faces written again, as a
    developer adding a setting does: default < omk.yaml < environment < the API's keyword, and
    the command line's flag last, each read from a typed field of Settings."""
    folder, target = project
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "omk", copy / "omk", ignore=shutil.ignore_patterns("__pycache__"))
    spec_file = copy / "omk" / "settings" / "spec.py"
    text = spec_file.read_text(encoding="utf-8")
    end = text.index("\n)\n", text.index("SETTINGS: tuple[Setting, ...] = ("))
    spec_file.write_text(text[: end + 1] + LINE + text[end + 1 :], encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMK_TARGET", "OMK_JUDGE", "OMK_SAMPLE"))}
    env["PYTHONPATH"] = str(copy)
    wrote = subprocess.run([sys.executable, "-m", "omk.settings.faces"], cwd=copy, env=env, capture_output=True, text=True, timeout=120)
    assert wrote.returncode == 0, wrote.stderr
    assert wrote.stdout.count("rewrote the fields in") == 3, wrote.stdout
    run = subprocess.run([sys.executable, "-c", CHILD, str(folder), target], cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "settings field: int",
        "option field: int | None",
        "keyword: int | None",
        "default: 7",
        "omk.yaml: 5",
        "environment: 6",
        "keyword given: 3",
        "flag given: 9",
    ]


def test_an_unknown_keyword_is_a_type_error_naming_it(project):
    from omk.api import prepare

    folder, target = project
    with pytest.raises(TypeError, match="sample_budjet"):
        prepare(folder / "eval-samples.yaml", target=target, cwd=folder, sample_budjet=3)  # type: ignore[call-arg]


def test_the_bundled_experiment_reads_its_omk_yaml_once():
    """`omk eval samples/experiment/eval-samples.yaml --dry-run`: every open of omk.yaml counted
    (the audit hook sees Python's open, io.open and os.open alike)."""
    script = """
import sys
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" and str(args[0]).endswith("omk.yaml") else None)
from omk.cli.main import main
code = main(["eval", "samples/experiment/eval-samples.yaml", "--dry-run"])
print(code, len(opened))
"""
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    code, opened = run.stdout.strip().splitlines()[-1].split()
    assert code == "0", run.stdout + run.stderr
    assert opened == "1", run.stdout + run.stderr


def test_zero_given_on_the_command_line_overrides_omk_yaml(tmp_path):
    """`--retries 0` is a value, not "not given"; an unset flag or an empty text is not."""
    from omk.settings.config import load_settings

    (tmp_path / "omk.yaml").write_text("retries: 3\nformat: md\n", encoding="utf-8")
    settings = load_settings([], tmp_path, {"retries": 0, "format": "", "no_urls": False})
    assert settings.retries == 0
    assert settings.formats == ["json", "md"]
    assert settings.no_urls is False
