"""The settings spec (omk/settings/spec.py) is the one place a setting is declared: the command
line's flags, omk.yaml's check, the Python API's keywords and the typed Settings are made from it.
A setting added to the spec (here at run time) appears on all four faces, in the right order of
precedence; the static mirrors type checkers need (RunOptions, EvalOptions, Settings) agree with it;
and a run reads its omk.yaml once."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from omk.settings import spec

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
    api=spec.Api("sample_budget", "int | None"),
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


def test_a_setting_added_to_the_spec_is_an_api_keyword_carried_by_the_typed_settings(added, project, monkeypatch):
    """default < omk.yaml < environment < the API's keyword (the command line's place)."""
    from omk.api import prepare

    folder, target = project

    def value(**keywords: typing.Any) -> typing.Any:
        evaluation = prepare(folder / "eval-samples.yaml", target=target, judge=False, cwd=folder, **keywords)
        return evaluation.settings.value("sample_budget")

    assert value() == 7
    (folder / "omk.yaml").write_text("sample_budget: 5\n", encoding="utf-8")
    assert value() == 5
    monkeypatch.setenv("OMK_SAMPLE_BUDGET", "6")
    assert value() == 6
    assert value(sample_budget=3) == 3
    with pytest.raises(TypeError, match="sample_budjet"):
        prepare(folder / "eval-samples.yaml", target=target, cwd=folder, sample_budjet=3)  # type: ignore[call-arg]


def test_a_setting_added_to_the_spec_comes_from_the_command_line_last(added, tmp_path, monkeypatch):
    from omk.cli.main import build_parser
    from omk.engine.options import EvalOptions
    from omk.settings.config import load_settings

    (tmp_path / "omk.yaml").write_text("sample_budget: 5\n", encoding="utf-8")
    monkeypatch.setenv("OMK_SAMPLE_BUDGET", "6")
    options = EvalOptions.from_mapping(vars(build_parser().parse_args(["eval", "--sample-budget", "9"])))
    assert options.get("sample_budget") == 9
    assert load_settings([], tmp_path, options.as_cli()).value("sample_budget") == 9
    assert load_settings([], tmp_path, {}).value("sample_budget") == 6


def test_run_options_mirrors_the_api_face_of_the_spec():
    """RunOptions is written out for type checkers (a TypedDict made at run time is not checked
    statically); its keywords and their types are the spec's."""
    from omk.api import RunOptions

    mirrored = {name: str(hint.__forward_arg__) if isinstance(hint, typing.ForwardRef) else hint for name, hint in RunOptions.__annotations__.items()}
    assert mirrored == {s.api.keyword: s.api.annotation for s in spec.SETTINGS if s.api is not None}


def test_eval_options_and_settings_mirror_the_spec():
    from omk.engine.options import EvalOptions
    from omk.settings.config import BLOCKS, Settings

    flags = [s.name for s in spec.SETTINGS if s.flag is not None]
    assert {f.name for f in dataclasses.fields(EvalOptions) if f.name not in ("samples", "added")} == set(flags)
    where = {"added", "cwd", "config_file", "target_base", "judge_off", "debias_length"}  # where the run is; what a flag turns off
    assert {f.name for f in dataclasses.fields(Settings)} - where == {s.field for s in spec.SETTINGS if s.field is not None}
    defaults = Settings()
    for setting in spec.SETTINGS:
        if setting.field is not None:
            assert getattr(defaults, setting.field) == setting.default, setting.name
    assert set(BLOCKS) <= {s.name for s in spec.SETTINGS if s.yaml}


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
