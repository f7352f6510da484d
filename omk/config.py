"""Settings: built-in defaults < omk.yaml < environment < command line, each overriding the one before."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omk.errors import ConfigError, Problem
from omk.safe_files import read_text_file

CONFIG_NAME = "omk.yaml"

# key in omk.yaml -> expected Python type(s)
KNOWN_KEYS: dict[str, tuple[type, ...]] = {
    "target": (str,),
    "judge": (str, list),
    "threshold": (int, float),
    "concurrency": (int,),
    "timeout": (int, float),
    "retries": (int,),
    "out": (str,),
    "format": (str, list),
    "lang": (str,),
    "system": (str,),
    "skill": (str, list),  # a skill file or folder, a folder of skill folders, or a list of them (omk.skillset)
    "skills": (str, list),  # the same, under its plural name
    "regex_timeout": (int, float),
    "hook_timeout": (int, float),
    "mcp_config": (str,),
    "url_timeout": (int, float),  # seconds per fetched URL (URL inlining)
    "url_max_bytes": (int,),  # size cap per fetched URL (URL inlining)
    "max_output_bytes": (int,),  # stdout kept from a cmd: target or a command judge per call
    "url_allow": (list, str),  # inside hosts / CIDRs URL inlining may fetch (omk.inline.policy)
    "allow_paths": (list, str),  # folders outside the samples' own that return_file and hooks may use (omk.safe_files)
    "openai": (dict,),
    "anthropic": (dict,),
    "claude": (dict,),  # the Claude Code CLI target: path, args, env, mcp_config, user_config
    "codex": (dict,),  # the Codex CLI target: path, args, env
    "cmd": (dict,),  # cmd: targets: mcp (serve each sample's mocks over MCP)
    "max_turns": (int,),
    "judge_repeat": (int,),  # judge calls per item, averaged (--judge-repeat)
    "variants": (list,),  # an experiment's arms (omk/engine/variants.py)
    "max_cost_increase": (int, float),  # percent: an experiment's treatment may cost this much more per sample
    "budget_usd": (int, float),  # no new call once one invocation's spend reaches it (--budget-usd)
    "budget_per_sample_usd": (int, float),  # the same, as so much per (sample, repeat) still to run
}


@dataclass(slots=True)
class Settings:
    target: str | None = None
    target_base: Path = field(default_factory=Path.cwd)  # where a relative target path resolves
    judge: list[str] = field(default_factory=list)
    judge_off: bool = False  # --no-judge on a configured judge: skipped items say so (omk.judge.why_no_judge)
    threshold: float = 3.5
    concurrency: int = 4
    timeout: float = 120.0
    retries: int = 2
    out: str | None = None
    formats: list[str] = field(default_factory=lambda: ["json"])
    lang: str = "en"
    regex_timeout: float = 2.0
    hook_timeout: float = 30.0
    judge_repeat: int = 1  # --judge-repeat N: calls per judge item, averaged
    max_cost_increase: float | None = None  # percent; a treatment costing more per sample is CAUTIOUS
    budget_usd: float | None = None  # USD one invocation may spend on target and judge calls
    budget_per_sample_usd: float | None = None  # USD per (sample, repeat) to run: the budget is this times their number
    debias_length: bool = True  # --no-debias-length turns off the judge prompt's length-debias block
    url_allow: list[str] = field(default_factory=list)  # omk.yaml url_allow + OMK_URL_ALLOW + --url-allow
    no_urls: bool = False  # --no-urls: no URL inlining at all
    config_file: Path | None = None
    cwd: Path = field(default_factory=Path.cwd)  # the folder the run belongs to: .omk/, relative paths
    extra: dict[str, Any] = field(default_factory=dict)  # provider blocks etc., for later targets


# Settings whose type is not enough: (test, what the message says it must be)
# The same ranges as the command-line options (omk/cli/main.py, docs/security.md).
RANGES: dict[str, tuple[Any, str]] = {
    "threshold": (lambda v: 1 <= v <= 5, "between 1 and 5, like the scores"),
    "concurrency": (lambda v: 1 <= v <= 1_000, "from 1 to 1,000"),
    "timeout": (lambda v: 0 < v <= 86_400, "greater than 0 and at most 86,400 seconds"),
    "retries": (lambda v: 0 <= v <= 100, "from 0 to 100"),
    "regex_timeout": (lambda v: 0 < v <= 86_400, "greater than 0 and at most 86,400 seconds"),
    "hook_timeout": (lambda v: 0 < v <= 86_400, "greater than 0 and at most 86,400 seconds"),
    "judge_repeat": (lambda v: 1 <= v <= 100, "from 1 to 100"),
    "url_timeout": (lambda v: 0 < v <= 86_400, "greater than 0 and at most 86,400 seconds"),
    # What a fetched page or a program's output may hold is kept in memory: at most 1 GiB.
    "url_max_bytes": (lambda v: 1 <= v <= 2**30, "from 1 to 1,073,741,824 (bytes)"),
    "max_output_bytes": (lambda v: 1 <= v <= 2**30, "from 1 to 1,073,741,824 (bytes)"),
    "max_cost_increase": (lambda v: 0 <= v <= 1_000_000, "a percentage from 0 to 1,000,000"),
    "budget_usd": (lambda v: 0 < v <= 1e9, "greater than 0 and at most 1,000,000,000 (USD)"),
    "budget_per_sample_usd": (lambda v: 0 < v <= 1e9, "greater than 0 and at most 1,000,000,000 (USD)"),
}


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
        return {}
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError([Problem(name, node.start_mark.line + 1, "", "", "omk.yaml must be a mapping")])
    data = yaml.SafeLoader(text).get_single_data() or {}
    problems = []
    for key_node, value_node in node.value:
        key = key_node.value
        line = key_node.start_mark.line + 1
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            problems.append(Problem(name, line, "", key, f"unknown setting{hint}"))
        elif not isinstance(data[key], KNOWN_KEYS[key]) or isinstance(data[key], bool):
            expected = " or ".join(t.__name__ for t in KNOWN_KEYS[key])
            problems.append(Problem(name, line, "", key, f"must be {expected}"))
        elif key in RANGES and not RANGES[key][0](data[key]):
            problems.append(Problem(name, line, "", key, f"must be {RANGES[key][1]} (got {data[key]!r})"))
        elif key == "url_allow":
            problems.extend(_allow_problems(name, value_node))
    if problems:
        raise ConfigError(problems)
    return data


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


def _allow_problems(name: str, node: Any) -> list[Problem]:
    """Each `url_allow` entry checked, with the line it is on."""
    import yaml

    from omk.inline.policy import AllowRuleError, parse_allow_rule

    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    problems = []
    for item in items:
        line = item.start_mark.line + 1
        if not isinstance(item, yaml.ScalarNode):
            problems.append(Problem(name, line, "", "url_allow", "each entry must be a host, host:port, IP address or CIDR"))
            continue
        for entry in _split_list(str(item.value)):
            try:
                parse_allow_rule(entry)
            except AllowRuleError as exc:
                problems.append(Problem(name, line, "", "url_allow", str(exc)))
    return problems


def env_url_allow(environ: dict[str, str] | None = None) -> list[str]:
    """`OMK_URL_ALLOW` (comma-separated), each entry checked; ConfigError names the variable."""
    entries = _split_list((environ if environ is not None else os.environ).get("OMK_URL_ALLOW", ""))
    if not entries:
        return entries
    from omk.inline.policy import AllowRuleError, parse_allow_rule

    for entry in entries:
        try:
            parse_allow_rule(entry)
        except AllowRuleError as exc:
            raise ConfigError(f"OMK_URL_ALLOW: {exc}") from None
    return entries


def load_settings(samples_paths: list[Path], cwd: Path, cli: dict[str, Any]) -> Settings:
    s = Settings(cwd=cwd)
    cfg_path = find_config(samples_paths, cwd)
    if cfg_path is not None:
        data = read_config(cfg_path)
        s.config_file = cfg_path
        if "target" in data:
            s.target = data["target"]
            s.target_base = cfg_path.parent
        if "judge" in data:
            s.judge = _split_list(data["judge"])
        if "format" in data:
            s.formats = _split_list(data["format"])
        for key in ("threshold", "concurrency", "timeout", "retries", "out", "lang", "regex_timeout", "hook_timeout", "judge_repeat", "max_cost_increase", "budget_usd", "budget_per_sample_usd"):
            if key in data:
                setattr(s, key, data[key])
        if "url_allow" in data:
            s.url_allow = _split_list(data["url_allow"])
        s.extra = {k: v for k, v in data.items() if k in ("openai", "anthropic", "claude", "codex", "cmd", "system", "skill", "skills", "mcp_config", "max_turns", "url_timeout", "url_max_bytes", "max_output_bytes")}
        for key in ("skill", "skills"):  # a skill file or folder is relative to omk.yaml's folder
            if key in s.extra:
                s.extra[key] = _resolve_paths(s.extra[key], cfg_path.parent)
        for agent in ("claude", "codex"):
            if agent in s.extra:
                s.extra[agent] = _claude_paths(s.extra[agent], cfg_path.parent)
    if os.environ.get("OMK_TARGET"):
        s.target, s.target_base = os.environ["OMK_TARGET"], cwd
    if os.environ.get("OMK_JUDGE"):
        s.judge = _split_list(os.environ["OMK_JUDGE"])
    if cli.get("target"):
        s.target, s.target_base = cli["target"], cwd
    if cli.get("judge"):
        s.judge = _split_list(cli["judge"])
    if cli.get("judge_repeat") is not None:
        s.judge_repeat = cli["judge_repeat"]
    if cli.get("no_debias_length"):
        s.debias_length = False
    if cli.get("no_judge"):  # "turned off" only when there was a judge to turn off
        s.judge, s.judge_off = [], bool(s.judge)
    if cli.get("format"):
        s.formats = _split_list(cli["format"])
    for key in ("threshold", "concurrency", "timeout", "retries", "out", "lang", "max_cost_increase", "budget_usd", "budget_per_sample_usd"):
        if cli.get(key) is not None:
            setattr(s, key, cli[key])
    s.url_allow = [*s.url_allow, *env_url_allow(), *(cli.get("url_allow") or [])]  # allow-lists add up
    s.no_urls = bool(cli.get("no_urls"))
    if cli.get("mcp_config"):
        s.extra["mcp_config"] = str(cwd / cli["mcp_config"])  # a command-line path is relative to cwd
    if "json" not in s.formats:
        s.formats.insert(0, "json")
    if s.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    if s.out and Path(s.out).exists() and not Path(s.out).is_dir():
        raise ConfigError(f"--out {s.out}: exists and is not a folder; name a folder for the run")
    return s
