"""Settings: built-in defaults < omk.yaml < environment < command line, each overriding the one before,
for every setting of the spec (omk/settings/spec.py)."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from omk.core.errors import ConfigError, Problem
from omk.io.safe_files import read_text_file
from omk.settings import spec

if TYPE_CHECKING:
    from omk.settings.target_settings import TargetSettings

CONFIG_NAME = "omk.yaml"


@dataclass(slots=True)
class Settings:
    """One run's settings, typed: each field below the marker is a setting of the spec
    (omk/settings/spec.py) and holds its value after defaults < omk.yaml < environment < command
    line (`load_settings`). The provider blocks (`openai`, `claude`…) are as omk.yaml gives them,
    `skill`, `claude.path` and `claude.mcp_config` made absolute from omk.yaml's folder;
    `judge_off`: --no-judge turned off a judge that was configured (omk.judge.why_no_judge)."""

    config_file: Path | None = None
    cwd: Path = field(default_factory=Path.cwd)  # the folder the run belongs to: .omk/, relative paths
    target_base: Path = field(default_factory=Path.cwd)  # where a relative target path resolves
    # --- fields made from the settings spec by `python -m omk.settings.faces`: edit omk/settings/spec.py, not these lines ---
    target: str | None = None
    judge: list[str] = field(default_factory=list)
    judge_off: bool = False
    judge_repeat: int = 1
    debias_length: bool = True
    concurrency: int = 4
    timeout: float = 120.0
    retries: int = 2
    budget_usd: float | None = None
    budget_per_sample_usd: float | None = None
    threshold: float = 3.5
    mcp_config: str | None = None
    url_allow: list[str] = field(default_factory=list)
    no_urls: bool = False
    out: str | None = None
    formats: list[str] = field(default_factory=lambda: ["json"])
    lang: str = "en"
    max_cost_increase: float | None = None
    system: str | None = None
    skill: str | list[str] | None = None
    skills: str | list[str] | None = None
    regex_timeout: float = 2.0
    hook_timeout: float = 30.0
    url_timeout: float | None = None
    url_max_bytes: int | None = None
    max_output_bytes: int | None = None
    max_turns: int | None = None
    openai: dict[str, Any] | None = None
    anthropic: dict[str, Any] | None = None
    claude: dict[str, Any] | None = None
    codex: dict[str, Any] | None = None
    cmd: dict[str, Any] | None = None
    # --- end of the fields made from the settings spec ---

    def blocks(self) -> TargetSettings:
        """What the targets, the judge's clients and the secret masker read (the provider blocks,
        system, skill, mcp_config and the caps), typed: the settings whose spec line says `targets`."""
        from omk.settings.target_settings import NAMES, TargetSettings

        return TargetSettings(**{name: getattr(self, name) for name in NAMES})


class ConfigFile(msgspec.Struct, frozen=True):
    """The omk.yaml a run uses, read and checked once (`path` None: there is none)."""

    path: Path | None = None
    data: dict[str, Any] = msgspec.field(default_factory=dict)
    node: Any = None  # its YAML node tree, for the lines of what is checked later (variants:)

    @property
    def folder(self) -> Path | None:
        return self.path.parent if self.path is not None else None

    @classmethod
    def find(cls, samples_paths: list[Path], cwd: Path) -> ConfigFile:
        """The omk.yaml beside the first samples file, else in `cwd`, read; or none."""
        path = find_config(samples_paths, cwd)
        if path is None:
            return cls()
        data, node = read_config_node(path)
        return cls(path, data, node)


def find_config(samples_paths: list[Path], cwd: Path) -> Path | None:
    """`omk.yaml` beside the first samples file (or in that folder), else in the current directory."""
    for p in samples_paths[:1]:
        folder = p if p.is_dir() else p.parent
        if (folder / CONFIG_NAME).is_file():
            return folder / CONFIG_NAME
    return cwd / CONFIG_NAME if (cwd / CONFIG_NAME).is_file() else None


def _split_list(value: str | list) -> list[str]:
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [v.strip() for v in value.split(",") if v.strip()]


def read_config(path: Path) -> dict[str, Any]:
    """omk.yaml's settings, each checked against the spec: ConfigError lists every problem with its line."""
    return read_config_node(path)[0]


def read_config_node(path: Path) -> tuple[dict[str, Any], Any]:
    """omk.yaml's settings, checked, and its YAML node tree."""
    import yaml

    name = str(path)
    try:
        text = read_text_file(path)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except OSError as exc:  # a FIFO, a device, /proc, over the cap: it says which
        raise ConfigError([Problem(name, None, "", "", f"cannot read: {exc.strerror or exc}")]) from None
    except UnicodeDecodeError as exc:
        raise ConfigError([Problem(name, None, "", "", f"cannot read: {exc}")]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        raise ConfigError([Problem(name, line, "", "", f"YAML parse error: {getattr(exc, 'problem', exc)}")]) from None
    if node is None:
        return {}, None
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError([Problem(name, node.start_mark.line + 1, "", "", "omk.yaml must be a mapping")])
    data = yaml.SafeLoader(text).get_single_data() or {}
    known = spec.yaml_settings()
    problems = []
    for key_node, value_node in node.value:
        key = key_node.value
        line = key_node.start_mark.line + 1
        setting = known.get(key)
        if setting is None:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            problems.append(Problem(name, line, "", key, f"unknown setting{hint}"))
        elif (what := _wrong(setting, data[key])) is not None:
            problems.append(Problem(name, line, "", key, what))
        elif setting.check_entry is not None:
            problems.extend(_entry_problems(name, setting, value_node))
    if problems:
        raise ConfigError(problems)
    return data, node


def _wrong(setting: spec.Setting, value: Any) -> str | None:
    """What is wrong with an omk.yaml value of this setting (its type, its range), or None."""
    if not isinstance(value, setting.type) or (isinstance(value, bool) and bool not in setting.type):
        return f"must be {' or '.join(t.__name__ for t in setting.type)}"
    if setting.number is not None and isinstance(value, int | float) and not setting.number.admits(value):
        return f"must be {setting.number.words()} (got {value!r})"
    return None


def _resolve_paths(value: Any, folder: Path) -> Any:
    """A path, or each path of a list, made absolute from `folder` (other values stay as they are)."""
    if isinstance(value, list):
        return [str((folder / v).resolve()) if isinstance(v, str) else v for v in value]
    return str((folder / value).resolve()) if isinstance(value, str) else value


def _claude_paths(block: dict[str, Any], folder: Path) -> dict[str, Any]:
    """`claude.path` / `codex.path` (when path-like: a bare name is looked up on PATH) and
    `claude.mcp_config` are relative to omk.yaml's folder."""
    block = dict(block)
    path = block.get("path")
    if isinstance(path, str) and ("/" in path or path.startswith(".")):
        block["path"] = str(folder / os.path.expanduser(path))
    if isinstance(block.get("mcp_config"), str):
        block["mcp_config"] = str(folder / os.path.expanduser(block["mcp_config"]))
    return block


def _entry_problems(name: str, setting: spec.Setting, node: Any) -> list[Problem]:
    """Each entry of a list setting (`url_allow`) checked, with the line it is on."""
    import argparse

    import yaml

    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    problems = []
    for item in items:
        line = item.start_mark.line + 1
        if not isinstance(item, yaml.ScalarNode):
            problems.append(Problem(name, line, "", setting.name, "each entry must be a host, host:port, IP address or CIDR"))
            continue
        for entry in _split_list(str(item.value)):
            try:
                assert setting.check_entry is not None
                setting.check_entry(entry)
            except argparse.ArgumentTypeError as exc:
                problems.append(Problem(name, line, "", setting.name, str(exc)))
    return problems


def load_settings(samples_paths: list[Path], cwd: Path, cli: dict[str, Any], config: ConfigFile | None = None) -> Settings:
    """The run's settings: for each setting of the spec, its default, then omk.yaml's value, then
    the environment's, then the command line's (or the API's) — each given one replacing the
    last, or adding to it for a list that adds up (`url_allow`); then what the spec says one
    setting does to another (`always`, `opposite`, `clears`). `config`: the omk.yaml already read
    for this run (None: found and read here)."""
    if config is None:
        config = ConfigFile.find(samples_paths, cwd)
    s = Settings(cwd=cwd, config_file=config.path)
    for setting in spec.SETTINGS:
        if setting.field is None:
            continue
        value, last = setting.fresh_default(), None
        for source, given in _given(setting, config, cli):
            given = _normal(setting, source, given, config.folder or cwd, cwd)
            value = [*value, *given] if setting.combine == "add" else given
            last = source
        if setting.always:
            value = [*(entry for entry in setting.always if entry not in value), *value]
        setattr(s, setting.field, not value if setting.opposite else value)
        if setting.name == "target" and last is not None:  # a relative target path: from where it was given
            s.target_base = config.folder if last == "yaml" and config.folder is not None else cwd
    _clear(s)
    _check(s)
    return s


def _given(setting: spec.Setting, config: ConfigFile, cli: dict[str, Any]) -> list[tuple[spec.Source, Any]]:
    """The values a setting is given, weakest source first: omk.yaml, the environment, the
    command line or the API (an empty or absent value is not given)."""
    found: list[tuple[spec.Source, Any]] = []
    if setting.yaml and setting.name in config.data:
        found.append(("yaml", config.data[setting.name]))
    if setting.env is not None and os.environ.get(setting.env):
        found.append(("env", os.environ[setting.env]))
    if (setting.flag is not None or setting.api is not None) and _is_given(cli.get(setting.name)):
        found.append(("cli", cli[setting.name]))
    return found


def _is_given(value: Any) -> bool:
    """Whether a command-line or API value was given: not None, an unset flag or an empty text
    or list (0 is a value: `--retries 0`)."""
    return value is not None and value is not False and value != "" and value != []


def _normal(setting: spec.Setting, source: spec.Source, value: Any, folder: Path, cwd: Path) -> Any:
    """A given value as Settings holds it: a list split, a path made absolute, an environment
    variable's text converted and checked (ConfigError naming the variable)."""
    if setting.split or setting.combine == "add":
        value = _split_list(value)
    if source == "env":
        value = _from_env(setting, value)
    if source not in setting.path_from:
        return value
    if isinstance(value, dict):  # a target's block: its `path` and `mcp_config`
        return _claude_paths(value, folder)
    return _resolve_paths(value, folder) if source == "yaml" else str(cwd / value)


def _from_env(setting: spec.Setting, value: Any) -> Any:
    import argparse

    try:
        if setting.check_entry is not None:
            for entry in value:
                setting.check_entry(entry)
        if setting.number is not None:
            return setting.number(value)
    except argparse.ArgumentTypeError as exc:
        raise ConfigError(f"{setting.env}: {exc}") from None
    return value


def _clear(s: Settings) -> None:
    """A setting that turns another off (--no-judge): that one emptied, and its own field saying
    whether there was anything to turn off."""
    fields = spec.by_name()
    for setting in spec.SETTINGS:
        if setting.clears is not None and setting.field is not None and getattr(s, setting.field):
            cleared = fields[setting.clears]
            assert cleared.field is not None
            setattr(s, setting.field, bool(getattr(s, cleared.field)))
            setattr(s, cleared.field, cleared.field_default())


def _check(s: Settings) -> None:
    """The checks of the whole, past each setting's own range."""
    if s.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    if s.out and Path(s.out).exists() and not Path(s.out).is_dir():
        raise ConfigError(f"--out {s.out}: exists and is not a folder; name a folder for the run")
