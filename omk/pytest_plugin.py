"""pytest plugin: each sample of a samples file is a test item.

    pytest eval-samples.yaml --omk-target replay:responses.jsonl
    pytest eval-samples.yaml --omk-target openai:gpt-4o-mini -k "sql or xss"

A sample that fails its gate fails its item, with every failed assertion's message and the start
of the output; a sample whose target or judge failed is reported as an error, not a failure; `-k`
selects by sample id. The selected samples of a file run together, once, through omk's engine (so
concurrency, retries and the cache work as in `omk eval`), when the first of them is set up.

Files are collected when named on the command line, or when they match a pattern of the
`omk_files` ini option (e.g. `omk_files = evals/*.yaml`). Registered through the `pytest11`
entry point, so it is active wherever omk is installed; it collects nothing unless asked to.

The `scripted_model` fixture starts omk's scripted model server (omk.testing) for a test.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from _pytest._code.code import TerminalRepr  # what repr_failure returns; pytest does not export it

    from omk.engine.run_report import Report
    from omk.records import AssertionResult, SampleResult
    from omk.testing import ModelServer

SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")
OUTPUT_CHARS = 400  # of the output shown under a failed sample


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("omk", "omk: samples files as tests")
    group.addoption("--omk-target", metavar="KIND:ARG", help="the target to run samples through (default: omk.yaml)")
    group.addoption("--omk-judge", metavar="SPEC[,SPEC]", help="the LLM judge (default: omk.yaml or OMK_JUDGE)")
    group.addoption("--omk-no-judge", action="store_true", help="do not run the judge (its items are skipped)")
    group.addoption("--omk-threshold", type=float, metavar="X", help="pass mark for every layer score, 1-5")
    group.addoption("--omk-concurrency", type=int, metavar="N", help="samples in flight at once")
    group.addoption("--omk-timeout", type=float, metavar="S", help="seconds per target call")
    group.addoption("--omk-out", metavar="DIR", help="also write each file's run folder (report.json) under DIR")
    group.addoption("--omk-no-cache", action="store_true", help="neither read nor write .omk/cache.sqlite")
    parser.addini("omk_files", type="args", default=[], help="glob patterns of samples files to collect as tests")


def _named(config: pytest.Config) -> set[Path]:
    named = set()
    for arg in config.args:
        path = Path(str(arg).split("::", 1)[0])
        path = path if path.is_absolute() else Path(config.invocation_params.dir) / path
        named.add(path.resolve())
    return named


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix.lower() not in SUFFIXES:
        return None
    config = parent.config
    rel = file_path.relative_to(config.rootpath).as_posix() if file_path.is_relative_to(config.rootpath) else str(file_path)
    patterns = config.getini("omk_files")
    if file_path.resolve() in _named(config) or any(fnmatch.fnmatch(rel, p) for p in patterns):
        return SamplesFile.from_parent(parent, path=file_path)
    return None


class SamplesError(Exception):
    """The samples file does not load: every located problem, one per line."""


class SampleFailed(Exception):
    def __init__(self, result: SampleResult):
        super().__init__(result.sample_id)
        self.result = result


class SampleErrored(Exception):
    def __init__(self, result: SampleResult):
        super().__init__(result.error)
        self.result = result


class SamplesFile(pytest.File):
    report: Report | None = None

    def collect(self) -> list[pytest.Item]:
        from omk.api import load
        from omk.core.errors import InputError

        try:
            samples = load(self.path)
        except InputError as exc:
            raise SamplesError(str(exc)) from None
        return [SampleItem.from_parent(self, name=s.sample_id, line=s.source.line if s.source else None) for s in samples]

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        """pytest's collector takes only the error, no traceback style (an item takes both)."""
        if isinstance(excinfo.value, SamplesError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def run_selected(self) -> Report:
        """Run every selected sample of this file, once."""
        if self.report is None:
            items = [i for i in self.session.items if isinstance(i, SampleItem) and i.parent is self]
            self.report = _evaluate(self.path, {i.name for i in items}, self.config)
        return self.report


def _evaluate(path: Path, wanted: set[str], config: pytest.Config) -> Report:
    import asyncio

    from omk.engine import EvalOptions, Evaluation

    opt = config.getoption
    out = opt("omk_out")
    options = EvalOptions(
        samples=[str(path)],
        target=opt("omk_target"),
        judge=opt("omk_judge"),
        no_judge=bool(opt("omk_no_judge")),
        threshold=opt("omk_threshold"),
        concurrency=opt("omk_concurrency"),
        timeout=opt("omk_timeout"),
        no_cache=bool(opt("omk_no_cache")),
        out=str(Path(out) / path.stem) if out else None,
    )
    cwd = Path(config.invocation_params.dir)
    evaluation = Evaluation.prepare(options, cwd=cwd, write=out is not None)
    evaluation.samples = [s for s in evaluation.samples if s.sample_id in wanted]
    asyncio.run(evaluation.execute())
    return evaluation.finish()


class SampleItem(pytest.Item):
    def __init__(self, *, line: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.line = line
        self.result: SampleResult | None = None

    def setup(self) -> None:
        from omk.core.errors import InputError

        assert isinstance(self.parent, SamplesFile)
        try:
            report = self.parent.run_selected()
        except InputError as exc:
            raise SamplesError(str(exc)) from None
        self.result = report.result(self.name)
        if self.result.status == "error":
            raise SampleErrored(self.result)  # raised in setup: pytest reports an error, not a failure

    def runtest(self) -> None:
        assert self.result is not None
        if not self.result.passed:
            raise SampleFailed(self.result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        error = excinfo.value
        if isinstance(error, SamplesError):
            return str(error)
        if isinstance(error, SampleErrored):
            return f"sample {self.name} errored: {error.result.error}"
        if isinstance(error, SampleFailed):
            return describe_failure(error.result)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, (self.line - 1) if self.line else None, f"omk sample {self.name}"


def describe_failure(result: SampleResult) -> str:
    """What a person needs to see of a failed sample: the scores, what failed and why, the output."""
    s = result.scores
    layers = ", ".join(f"{k} {v:.2f}" for k, v in (("fact", s.fact), ("behavior", s.behavior), ("judge", s.judge)) if v is not None)
    lines = [f"sample {result.sample_id} failed: composite {s.composite:.2f}" + (f" ({layers})" if layers else "")]
    units = [("", result)] + [(f"turn {t.index + 1}: ", t) for t in result.turns]
    for prefix, unit in units:
        for a in _failed(unit.assertions):
            lines.append(f"  {prefix}{_label(a)}: {a.message or 'failed'}")
        if unit.judge is not None and unit.judge.score is not None:
            lines.append(f"  {prefix}judge score {unit.judge.score}")
    if not result.assertions and not result.judge and not result.turns:
        lines.append("  nothing was graded")
    output = (result.output or "")[:OUTPUT_CHARS]
    lines.append("output: " + output + ("…" if result.output and len(result.output) > OUTPUT_CHARS else ""))
    return "\n".join(lines)


def _failed(assertions: Sequence[AssertionResult]) -> list[AssertionResult]:
    return [a for a in assertions if a.passed is False]


def _label(a: AssertionResult) -> str:
    negated = "not " if a.negate else ""
    value = f" {a.value!r}" if a.value is not None else ""
    return f"{negated}{a.type}{value}"


@pytest.fixture()
def scripted_model() -> Iterator[Callable[..., ModelServer]]:
    """`scripted_model(script)`: a scripted model server on 127.0.0.1 for the test, stopped after it.

    `script` is a script file's path, a `ModelScript`, a list of replies or a function from the
    request to a reply (omk.testing); `.root` / `.openai_url` are the base URLs to point a target at.
    """
    from omk.testing import ModelServer, load_script

    started: list[ModelServer] = []

    def start(script: Any, **options: Any) -> ModelServer:
        if isinstance(script, str | Path):
            script = load_script(Path(script))
        server = ModelServer(script, **options).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
