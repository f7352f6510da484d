"""Every setting omk takes, declared once: its name, type, default, help, range, and the places it
may be given — an `omk eval` flag, an omk.yaml key, an environment variable, a keyword of the
Python API. The command line's flags (omk.settings.flags), omk.yaml's check (omk.settings.config), the
order in which the sources override each other (omk.settings.config.load_settings), the API's keywords
(omk.api) and the range check of the engine (omk.engine.checks) are all made from `SETTINGS`, and so
are the fields of the typed faces: `Settings`, `EvalOptions`, `omk.RunOptions` and the targets'
`TargetSettings` (omk.settings.faces writes them; see there why they are written out rather than
made at run time).

Adding a setting is one `Setting(...)` line here, `python -m omk.settings.faces` (which rewrites
the typed faces' fields; a test fails until it is run), plus the code that uses its value.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal


class Number:
    """The type of every numeric option: a whole number, or a finite number, inside a documented
    range (docs/security.md). Anything else (a word, nan, inf, a number out of range, digits past
    Python's limit) is refused by argparse in one line, exit 2, before any work starts; omk.yaml
    and the Python API are held to the same range in the same words (`words`)."""

    def __init__(self, whole: bool, low: float, high: float, *, above_low: bool = False, what: str = "", suffix: str = ""):
        self.whole, self.low, self.high, self.above_low = whole, low, high, above_low
        self.what, self.suffix = what, suffix  # `seconds`, `USD`…; a suffix such as `%` is allowed after the number
        self.__name__ = "whole number" if whole else "number"

    def words(self) -> str:
        low, high = (f"{int(x):,}" if x == int(x) else f"{x:g}" for x in (self.low, self.high))
        unit = f" {self.what}" if self.what else ""
        if self.above_low:
            return f"greater than {low} and at most {high}{unit}"
        return f"from {low} to {high}{unit}"

    def admits(self, value: float) -> bool:
        """Whether a number (already of the right kind) is inside the range."""
        if not math.isfinite(value) or value < self.low or value > self.high:
            return False
        return not (self.above_low and value == self.low)

    def __call__(self, text: str) -> int | float:
        word = "a whole number" if self.whole else "a number"
        try:
            value: int | float = int(text) if self.whole else float(text.removesuffix(self.suffix) if self.suffix else text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {word} {self.words()}, got {text[:40]!r}") from None
        if not self.admits(value):
            raise argparse.ArgumentTypeError(f"must be {self.words()}, got {text[:40]}")
        return value


# The ranges, each wide enough for any real use and narrow enough that nothing downstream
# overflows or allocates per unit: a day per call, 10,000 repeats of a sample, 1,000 calls at once.
DAY = 86_400.0
REPEATS = Number(True, 1, 10_000)  # runs of each sample, drafts in all
JUDGE_REPEAT = Number(True, 1, 100)
CONCURRENCY = Number(True, 1, 1_000)
RETRIES = Number(True, 0, 100)
SEED = Number(True, 0, 2**63 - 1)
SECONDS = Number(False, 0, DAY, above_low=True, what="seconds")
USD = Number(False, 0, 1e9, above_low=True, what="USD")
DIFFERENCE = Number(False, 0.001, 4.0, what="(a composite difference, on the 1-5 scale)")
PERCENT = Number(False, 0, 1e6, what="percent", suffix="%")
SCORE = Number(False, 1, 5, what="(like the scores)")
# What a fetched page or a program's output may hold is kept in memory: at most 1 GiB.
BYTES = Number(True, 1, 2**30, what="(bytes)")


def _allow_entry(text: str) -> str:
    """One `--url-allow` entry: an inside host, host:port, IP address or CIDR."""
    from omk.inline.policy import AllowRuleError, parse_allow_rule

    try:
        parse_allow_rule(text)
    except AllowRuleError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text.strip()


@dataclass(frozen=True, slots=True)
class Flag:
    """How a setting is given on `omk eval`'s command line (`--NAME-WITH-DASHES`)."""

    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    action: str | type[argparse.Action] | None = None  # store_true, append, BooleanOptionalAction
    nargs: str | None = None
    convert: Callable[[str], Any] | None = None  # a converter other than the setting's Number
    group: str | None = None  # the argument group's title in --help
    exclusive: str | None = None  # flags sharing this name exclude each other
    annotation: str = ""  # EvalOptions' field type, when not the flag's own (omk.settings.faces)


@dataclass(frozen=True, slots=True)
class Api:
    """How a setting is given to `omk.evaluate` and the other run functions."""

    keyword: str
    annotation: str = ""  # RunOptions' type for it, when not the setting's own (omk.settings.faces)
    to_option: Callable[[Any], Any] | None = None  # the keyword's value -> the option's (cache=False -> no_cache=True)
    option: str | None = None  # the option it sets, when named otherwise than the setting


Source = Literal["yaml", "env", "cli"]


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting. `name` is the flag's dest, the omk.yaml key, the EvalOptions field and the
    Settings field, unless `into` names another field of Settings (None: a choice of one
    invocation, such as --resume, that Settings does not carry).

    A `--no-X` flag may say its Settings field the positive way (`opposite`: --no-debias-length
    into `debias_length`), or turn another setting off (`clears`: --no-judge empties `judge`, and
    its own field says whether there was a judge to turn off). `always`: entries a list setting
    holds whatever it is given, first (report.json among the formats)."""

    name: str
    type: tuple[type, ...]  # the value's type(s); omk.yaml's value is checked against them
    help: str
    default: Any = None
    number: Number | None = None  # the range of a numeric setting, on every face
    flag: Flag | None = None
    yaml: bool = False  # an omk.yaml key
    env: str | None = None  # an environment variable
    api: Api | None = None
    into: str | None = ""  # the Settings field ("": `name`; None: none)
    combine: Literal["replace", "add"] = "replace"  # add: each source's list adds to the last (url_allow)
    split: bool = False  # a comma-separated list, or a list (omk.yaml)
    path_from: tuple[Source, ...] = ()  # sources whose relative paths are from their folder (omk.yaml's, the current one)
    check_entry: Callable[[str], Any] | None = None  # each list entry checked (raises ArgumentTypeError)
    opposite: bool = False  # its Settings field holds the opposite of the flag
    clears: str | None = None  # given, it empties this setting; its field: whether that had a value
    always: tuple[str, ...] = ()  # list entries always held, first
    targets: bool = False  # handed to the targets, the judge's clients and the masker (TargetSettings)

    @property
    def field(self) -> str | None:
        return self.name if self.into == "" else self.into

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    def fresh_default(self) -> Any:
        """The default, a new list each time for a list."""
        return list(self.default) if isinstance(self.default, list | tuple) else self.default

    def field_default(self) -> Any:
        """The value its Settings field starts from, before any source is read."""
        return not self.default if self.opposite else self.fresh_default()


EXPERIMENTS = "experiments (docs/experiments.md)"
TARGET_HELP = (
    "KIND:ARG — openai:MODEL, anthropic:MODEL, claude:MODEL (Claude Code), codex:MODEL (Codex), cmd:COMMAND, replay:FILE; "
    "twice or more for an experiment (the first the control) with the pairwise judge"
)


def _join(value: Any) -> str | None:
    return ",".join(value) if value else None


def _entries(value: Any) -> list[str] | None:
    """An API keyword's list (one text is one entry)."""
    return None if value is None else [value] if isinstance(value, str) else list(value)


# `omk eval`'s flags appear in --help in this order; omk.yaml-only settings are among them.
SETTINGS: tuple[Setting, ...] = (
    Setting("target", (str,), TARGET_HELP, flag=Flag(action="append", annotation="str | None"), yaml=True, env="OMK_TARGET", api=Api("target", "str | Target | None")),
    Setting("prompts", (list,), "run these prompts instead of sample files (as runevals does)", flag=Flag(nargs="+", metavar="PROMPT"), into=None),
    Setting("expected", (list,), "the expected answers of --prompts, in the same order", flag=Flag(nargs="+", metavar="TEXT"), into=None),
    Setting("evaluators", (str,), "M365 evaluators for --prompts, comma-separated (default Relevance,Coherence)", flag=Flag(metavar="NAMES"), into=None),
    Setting("judge", (str, list), "judge SPEC[,SPEC...]", [], flag=Flag(exclusive="judge"), yaml=True, env="OMK_JUDGE", split=True,
            api=Api("judge", "str | Sequence[str] | bool | None")),  # fmt: skip
    Setting("no_judge", (bool,), "do not run the LLM judge", False, flag=Flag(action="store_true", exclusive="judge"), into="judge_off", clears="judge"),
    Setting("judge_repeat", (int,), "ask each judge N times per item and average (default 1)", 1, JUDGE_REPEAT, Flag(metavar="N"), yaml=True, api=Api("judge_repeat")),
    Setting("no_debias_length", (bool,), "leave the length-debias block out of the judge prompt", False, flag=Flag(action="store_true"), into="debias_length",
            opposite=True, api=Api("debias_length", to_option=lambda v: not v)),  # fmt: skip
    Setting("concurrency", (int,), "samples in flight at once (default 4)", 4, CONCURRENCY, Flag(), yaml=True, api=Api("concurrency")),
    Setting("timeout", (int, float), "seconds per target call (default 120)", 120.0, SECONDS, Flag(), yaml=True, api=Api("timeout")),
    Setting("retries", (int,), "retries of a failed target call (429, 5xx, timeout; default 2)", 2, RETRIES, Flag(), yaml=True, api=Api("retries")),
    Setting("repeat", (int,), "run each sample N times and report the spread", None, REPEATS, Flag(metavar="N"), into=None, api=Api("repeat")),
    Setting("no_cache", (bool,), "neither read nor write the response cache (.omk/cache.sqlite)", False, flag=Flag(action="store_true"), into=None,
            api=Api("cache", to_option=lambda v: not v)),  # fmt: skip
    Setting("resume", (str,), "finish an interrupted run: run only the samples it lacks", flag=Flag(metavar="RUN_DIR"), into=None),
    Setting("dry_run", (bool,), "load, check and plan the run; print the calls, tokens and cost it would take; call nothing", False,
            flag=Flag(action="store_true"), into=None),  # fmt: skip
    Setting("budget_usd", (int, float), "start no new call once target and judge spend reaches X USD (exit 3)", None, USD, Flag(metavar="X"), yaml=True,
            api=Api("budget_usd")),  # fmt: skip
    Setting("budget_per_sample_usd", (int, float), "the budget as X USD per sample run still to do", None, USD, Flag(metavar="X"), yaml=True,
            api=Api("budget_per_sample_usd")),  # fmt: skip
    Setting("threshold", (int, float), "pass mark for every layer score, 1-5 (default 3.5)", 3.5, SCORE, Flag(), yaml=True, api=Api("threshold")),
    Setting("filter", (str,), "only samples whose sample_id matches GLOB", flag=Flag(metavar="GLOB"), into=None, api=Api("filter")),
    Setting("mcp_config", (str,), "MCP servers for URL inlining (default: .mcp.json in the project)", flag=Flag(metavar="PATH"), yaml=True, path_from=("cli",),
            api=Api("mcp_config", "PathArg | None", to_option=lambda v: None if v is None else str(v)), targets=True),  # fmt: skip
    Setting("url_allow", (list, str), "let URL inlining fetch this inside host, host:port or CIDR (repeatable; see docs/security.md)", [],
            flag=Flag(action="append", convert=_allow_entry, metavar="HOST_OR_CIDR", exclusive="urls"),
            yaml=True, env="OMK_URL_ALLOW", combine="add", split=True, check_entry=_allow_entry, api=Api("url_allow", to_option=_entries)),
    Setting("no_urls", (bool,), "do not fetch the URLs in prompts (no URL inlining)", False, flag=Flag(action="store_true", exclusive="urls"),
            api=Api("urls", to_option=lambda v: not v)),  # fmt: skip
    Setting("shard", (str,), "run only the I-th of N disjoint parts of the samples (CI jobs; omk merge joins them)", flag=Flag(metavar="I/N"), into=None),
    Setting("out", (str,), "run folder (default .omk/runs/<run_id>)", flag=Flag(metavar="DIR"), yaml=True, api=Api("out", "PathArg | None", to_option=lambda v: None if v is None else str(v))),
    Setting("format", (str, list), "report formats, comma-separated (json is always written)", ["json"], flag=Flag(), yaml=True, split=True, into="formats", always=("json",),
            api=Api("formats", "Sequence[str] | None", to_option=_join)),  # fmt: skip
    Setting("lang", (str,), "language of the terminal text", "en", flag=Flag(choices=("en", "zh")), yaml=True, api=Api("lang")),
    Setting("quiet", (bool,), "print only the final verdict line", False, flag=Flag(action="store_true"), into=None),
    Setting("strict", (bool,), "an unknown field on a sample is an error (exit 2), not a warning", False, flag=Flag(action="store_true"), into=None, api=Api("strict")),
    Setting("gold", (list,), "people's labels (JSON Lines) to check the judge against (docs/judge.md)", flag=Flag(action="append", metavar="FILE"), into=None),
    Setting("cwd", (str,), "the project folder: omk.yaml, .omk/, relative paths", into=None, api=Api("cwd", "PathArg | None")),
    # experiments
    Setting("control", (str,), "the control variant: baseline, a skill file or folder, skill:PATH, system:TEXT, model:NAME, target:KIND:ARG",
            flag=Flag(metavar="SPEC", group=EXPERIMENTS), into=None),  # fmt: skip
    Setting("treatment", (list,), "treatment variant(s) compared with the control", flag=Flag(action="append", metavar="SPEC[,SPEC]", group=EXPERIMENTS), into=None),
    Setting("ablate", (str,), "an experiment of the whole skill against the skill without each section of SKILL.md (and reference file): what each part is worth",
            flag=Flag(metavar="SKILL_DIR", group=EXPERIMENTS), into=None),  # fmt: skip
    Setting("trivial", (int, float), "smallest composite difference worth acting on (default 0.1)", None, DIFFERENCE, Flag(metavar="X", group=EXPERIMENTS), into=None),
    Setting("require", (str,), "make the verdict the exit code (1 when not met)", flag=Flag(choices=("progress", "no-regress"), group=EXPERIMENTS), into=None),
    Setting("max_cost_increase", (int, float), "a treatment whose cost per sample rises more than PCT percent is CAUTIOUS (max_cost_increase: in omk.yaml)",
            None, PERCENT, Flag(metavar="PCT", group=EXPERIMENTS), yaml=True),  # fmt: skip
    Setting("seed", (int,), "seed of the schedule shuffle and the bootstrap (default: random, recorded)", None, SEED, Flag(metavar="N", group=EXPERIMENTS), into=None),
    Setting("pairwise", (bool,), "let the judge compare each treatment's answers with the control's, in both orders "
            "(default: on when the variants differ by target only, e.g. --target A --target B)",
            flag=Flag(action=argparse.BooleanOptionalAction, group=EXPERIMENTS), into=None),  # fmt: skip
    # omk.yaml only
    Setting("variants", (list,), "an experiment's arms (omk/engine/variants.py)", yaml=True, into=None),
    Setting("system", (str,), "a system prompt for model targets", yaml=True, targets=True),
    Setting("skill", (str, list), "a skill file or folder, a folder of skill folders, or a list of them (omk.domain.skillset)", yaml=True, path_from=("yaml",), targets=True),
    Setting("skills", (str, list), "the same as skill, under its plural name", yaml=True, path_from=("yaml",), targets=True),
    Setting("regex_timeout", (int, float), "seconds a regex assertion may take", 2.0, SECONDS, yaml=True),
    Setting("hook_timeout", (int, float), "seconds a sample's hook may take", 30.0, SECONDS, yaml=True),
    Setting("url_timeout", (int, float), "seconds per fetched URL (URL inlining)", None, SECONDS, yaml=True, targets=True),
    Setting("url_max_bytes", (int,), "size cap per fetched URL (URL inlining)", None, BYTES, yaml=True, targets=True),
    Setting("max_output_bytes", (int,), "stdout kept from a cmd: target or a command judge per call", None, BYTES, yaml=True, targets=True),
    Setting("max_turns", (int,), "turns a model target's tool loop, or Claude Code, may take per sample", None, yaml=True, targets=True),
    Setting("allow_paths", (list, str), "folders outside the samples' own that return_file and hooks may use (omk.io.safe_files)", yaml=True, into=None),
    Setting("openai", (dict,), "the openai: target and judge: base_url, api_key_env, params, price", yaml=True, targets=True),
    Setting("anthropic", (dict,), "the anthropic: target and judge: base_url, api_key_env, params, price", yaml=True, targets=True),
    Setting("claude", (dict,), "the Claude Code CLI target: path, args, env, mcp_config, user_config", yaml=True, path_from=("yaml",), targets=True),
    Setting("codex", (dict,), "the Codex CLI target: path, args, env", yaml=True, path_from=("yaml",), targets=True),
    Setting("cmd", (dict,), "cmd: targets: mcp (serve each sample's mocks over MCP)", yaml=True, targets=True),
)


def by_name(settings: tuple[Setting, ...] | None = None) -> dict[str, Setting]:
    return {s.name: s for s in (SETTINGS if settings is None else settings)}


def yaml_settings() -> dict[str, Setting]:
    """omk.yaml's keys: the settings it may hold."""
    return {s.name: s for s in SETTINGS if s.yaml}


def api_settings() -> dict[str, Setting]:
    """The Python API's keywords: the setting each gives."""
    return {s.api.keyword: s for s in SETTINGS if s.api is not None}
