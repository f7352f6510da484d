"""omk's Python API: load samples, evaluate them, read the report, add assertion types.

    import omk

    samples = omk.load("eval-samples.yaml")                 # raises omk.InputError with every problem
    report = omk.evaluate(samples, target="replay:responses.jsonl")
    for result in report.failures():
        print(result.sample_id, [a.message for a in result.assertions if a.passed is False])

See docs/python-api.md. Everything here drives the same engine as `omk eval` (omk.engine).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from omk.core.errors import InputError, Problem
from omk.engine import EvalOptions, Evaluation, Report
from omk.engine.state import OnResult
from omk.samples.model import Layer, Sample
from omk.targets.base import Target

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from omk.engine.experiment import ExperimentOutcome
    from omk.engine.variants import Variant
    from omk.records import SampleResult
    from omk.records.document import ReportDocument

PathArg = str | PathLike[str]
SampleArg = PathArg | dict[str, Any] | Sample


# The API face of the settings spec (omk/settings/spec.py): its keys are written from the spec by
# omk.settings.faces, so that type checkers see each keyword's type (a TypedDict made at run time
# is not checked statically).
class RunOptions(TypedDict, total=False):
    """The keywords `evaluate`, `evaluate_async`, `prepare`, `run_experiment` and `ablate` take (each optional).

    `target`: a spec (`"replay:r.jsonl"`, `"openai:MODEL"`, `"cmd:…"`) or a target object; `judge`: a
    spec, a list of specs (an ensemble), False for none; `out`: a run folder to write; `formats`:
    report formats besides report.json; `cache=False` skips `.omk/cache.sqlite`; `urls=False`
    fetches no URL in a prompt; `debias_length=False` leaves the length-debias block out of the
    judge prompt; `cwd`: the project folder (omk.yaml, relative paths); `strict`: unknown sample
    fields are errors. The others are the `omk eval` flags of the same names."""

    # --- fields made from the settings spec by `python -m omk.settings.faces`: edit omk/settings/spec.py, not these lines ---
    target: str | Target | None
    judge: str | Sequence[str] | bool | None
    judge_repeat: int | None
    debias_length: bool
    concurrency: int | None
    timeout: float | None
    retries: int | None
    repeat: int | None
    cache: bool
    budget_usd: float | None
    budget_per_sample_usd: float | None
    threshold: float | None
    filter: str | None
    mcp_config: PathArg | None
    url_allow: Sequence[str] | None
    urls: bool
    out: PathArg | None
    formats: Sequence[str] | None
    lang: str | None
    strict: bool
    cwd: PathArg | None
    # --- end of the fields made from the settings spec ---


class LoadedList(list[Sample]):
    """The samples `omk.load` returns: a list, plus `warnings` (`omk.Problem`s with severity
    "warning": fields omk ignored, each with file, line, sample and field)."""

    warnings: list[Problem]

    def __init__(self, samples: Iterable[Sample] = (), warnings: Iterable[Problem] = ()):
        super().__init__(samples)
        self.warnings = list(warnings)


def load(paths: PathArg | Iterable[PathArg], *, strict: bool = False) -> LoadedList:
    """The samples in these files or folders, in any format omk reads (omk YAML/JSON/JSONL,
    Microsoft 365 Agents Toolkit eval documents, Big Sky datasets). Raises `InputError` whose
    `problems` list every located error (file, line, sample, field, message). An unknown field on
    a sample is ignored and listed in the result's `warnings`; `strict=True` makes it an error."""
    from omk.loader import load_samples

    items = [paths] if isinstance(paths, str | PathLike) else list(paths)
    loaded = load_samples([Path(p) for p in items], strict=strict)
    return LoadedList(loaded.samples, loaded.warnings)


def _split(samples: SampleArg | Iterable[SampleArg]) -> tuple[list[Path], list[Sample] | None, list[dict[str, Any]]]:
    items = [samples] if isinstance(samples, str | PathLike | dict | Sample) else list(samples)
    paths = [Path(i) for i in items if isinstance(i, str | PathLike)]
    if len(paths) == len(items):
        return paths, None, []
    given = [i for i in items if isinstance(i, Sample)]
    dicts = [i for i in items if isinstance(i, dict)]
    if len(paths) + len(given) + len(dicts) != len(items):
        odd = next(i for i in items if not isinstance(i, str | PathLike | dict | Sample))
        raise TypeError(f"samples: expected paths, mappings or omk.Sample objects, got {type(odd).__name__}")
    return paths, given, dicts


def _in_memory(samples: SampleArg | Iterable[SampleArg], cwd: Path, strict: bool = False) -> tuple[list[str], LoadedList | None]:
    """(files to load as the CLI would, or the samples built here, in the order given, when any
    was given in memory)."""
    from omk.loader import load_data

    paths, given, dicts = _split(samples)
    if given is None:
        return [str(p) for p in paths], None
    items = [samples] if isinstance(samples, str | PathLike | dict | Sample) else list(samples)
    data = load_data({"samples": dicts}, name="<samples>", base_dir=cwd, strict=strict) if dicts else None
    built_dicts = iter(data.samples if data else [])
    ordered = LoadedList(warnings=data.warnings if data else [])
    for item in items:
        if isinstance(item, Sample):
            ordered.append(item)
        elif isinstance(item, dict):
            ordered.append(next(built_dicts))
        else:
            from_file = load([item], strict=strict)
            ordered.extend(from_file)
            ordered.warnings += from_file.warnings
    _unique_ids(ordered)
    return [], ordered


def _unique_ids(samples: list[Sample]) -> None:
    seen: set[str] = set()
    for s in samples:
        if s.sample_id in seen:
            raise InputError(f"samples: duplicate sample_id {s.sample_id!r}")
        seen.add(s.sample_id)


def _options(files: list[str], target: str | Target | None, judge: str | Sequence[str] | bool | None, settings: dict[str, Any]) -> EvalOptions:
    options = EvalOptions.from_mapping({**settings, "samples": files})
    if isinstance(target, str):
        options.target = target
    if judge is False:
        options.no_judge = True
    elif isinstance(judge, str):
        options.judge = judge
    elif judge not in (None, True):
        options.judge = ",".join(judge)  # type: ignore[arg-type]  # what is left is a list of judge specs
    return options


def prepare_options(samples: SampleArg | Iterable[SampleArg], **options: Any) -> tuple[EvalOptions, Path, LoadedList | None, bool]:
    """(the engine's options, the project folder, samples built in memory or None, whether to
    write). The keywords are the settings spec's API face (omk/settings/spec.py)."""
    from omk.settings import spec

    known = spec.api_settings()
    if unknown := sorted(set(options) - set(known)):
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    cwd = options.get("cwd")
    folder = Path(cwd) if cwd is not None else Path.cwd()
    files, built = _in_memory(samples, folder, bool(options.get("strict", False)))
    settings: dict[str, Any] = {}
    for keyword, setting in known.items():
        if keyword in ("target", "judge", "cwd") or keyword not in options:
            continue  # target and judge take objects and lists too; cwd is the folder above
        assert setting.api is not None
        value = options[keyword]
        settings[setting.api.option or setting.name] = setting.api.to_option(value) if setting.api.to_option else value
    return _options(files, options.get("target"), options.get("judge"), settings), folder, built, options.get("out") is not None


def prepare(samples: SampleArg | Iterable[SampleArg], **options: Unpack[RunOptions]) -> Evaluation:
    """An evaluation ready to run: what `evaluate` does before it calls the target."""
    opts, folder, built, write = prepare_options(samples, **options)
    target = options.get("target")
    the_target = target if target is not None and not isinstance(target, str) else None
    evaluation = Evaluation.prepare(opts, cwd=folder, samples=built, target=the_target, write=write)
    if built is not None:
        evaluation.warnings = list(built.warnings)
    return evaluation


def evaluate(samples: SampleArg | Iterable[SampleArg], *, on_result: OnResult | None = None, **options: Unpack[RunOptions]) -> Report:
    """Run the samples through the target, check and score every output, and return the `Report`.

    `samples`: paths (files or folders, any format), mappings written like a sample file's
    samples, `omk.Sample` objects, or a mix. `target`: a spec string (`"replay:r.jsonl"`,
    `"openai:MODEL"`, `"anthropic:MODEL"`, `"cmd:…"`) or a target object; None takes `target:`
    from omk.yaml (beside the first samples file, else in `cwd`) or `OMK_TARGET`. `judge`: a spec
    or a list of specs (an ensemble), False for none, None for whatever omk.yaml or `OMK_JUDGE`
    says. `out`: a run folder to write report.json, results.jsonl and `formats` into; None keeps
    the run in memory. `cache=False` neither reads nor writes `.omk/cache.sqlite`. An unknown
    field on a sample is ignored and listed in `report.warnings` (`strict=True`: an error). Raises
    `InputError` (bad samples or settings) before any call is made; a failing target or judge
    marks that sample errored and the run goes on.
    """
    import asyncio

    evaluation = prepare(samples, **options)
    asyncio.run(evaluation.execute(on_result))
    return evaluation.finish()


async def evaluate_async(
    samples: SampleArg | Iterable[SampleArg], *, on_result: OnResult | None = None, **options: Unpack[RunOptions]
) -> Report:
    """`evaluate` for a caller already inside an event loop."""
    evaluation = prepare(samples, **options)
    await evaluation.execute(on_result)
    return evaluation.finish()


def assertion_type(
    name: str, *, layer: str | Layer = "fact", schema: dict[str, Any] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a Python function as assertion type `name`, usable from sample files.

    The function is called as `fn(output, check)` (`check` is an `omk.CheckInput`) and returns a
    bool, `(bool, message)`, `{"pass", "message", "score"}` or an `omk.Outcome`; it may be async.
    `layer` is "fact" or "behavior". `schema` is the JSON Schema of the assertion's own fields
    (its `properties` and `required`); by default any field is accepted.
    """
    from omk.assertions.python import register

    if Layer(layer) not in (Layer.FACT, Layer.BEHAVIOR):
        raise ValueError(f"layer must be 'fact' or 'behavior', got {layer!r}")

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        register(name, fn, layer=layer, schema=schema)
        return fn

    return decorate


def run_experiment(
    samples: SampleArg | Iterable[SampleArg],
    *,
    variants: Sequence[Variant | Mapping[str, Any]] | None = None,
    control: str | None = None,
    treatments: Sequence[str] | None = None,
    seed: int | None = None,
    trivial: float = 0.1,
    pairwise: bool | None = None,
    max_cost_increase: float | None = None,
    on_result: Callable[[str, SampleResult], None] | None = None,
    **options: Unpack[RunOptions],
) -> ExperimentOutcome:
    """Run the samples on every variant, interleaved, and compare each treatment with the control.

    `variants`: `omk.Variant` objects or mappings written as omk.yaml's `variants:` entries;
    or `control` and `treatments` as `--control`/`--treatment` take them (`"baseline"`, a skill
    path, `"system:TEXT"`, `"model:NAME"`, `"target:KIND:ARG"`). With neither, omk.yaml's
    `variants:` are used. `pairwise`: whether the judge also compares each treatment's answers
    with the control's, in both orders (`.block.pairs`); `max_cost_increase`: a percentage
    (as `--max-cost-increase`): a treatment whose cost per sample rises more is CAUTIOUS; None turns it on when the variants
    differ by target only, as `omk eval --target A --target B` does (`control="target:KIND:ARG"`,
    `treatments=["target:KIND:ARG"]`). The other keywords are `evaluate`'s. Returns an `ExperimentOutcome`:
    `.analysis` (an `omk.stats.ExperimentAnalysis`: variants, comparisons, `.verdict`), `.reports`
    (each variant's `Report`), `.block` (report.json's `experiment` block).
    """
    import asyncio

    from omk.engine.run_kind import experiment_for
    from omk.engine.variants import Variant, check_roles, parse_item

    if options.get("target") is not None and not isinstance(options["target"], str):
        raise TypeError("run_experiment builds each variant's target from settings: give target as a spec string")
    opts, folder, built, write = prepare_options(samples, **options)
    opts.max_cost_increase, opts.seed, opts.trivial, opts.pairwise = max_cost_increase, seed, trivial, pairwise
    chosen = None
    if variants is not None:
        chosen = check_roles([v if isinstance(v, Variant) else parse_item(v, folder) for v in variants], "variants")
    elif control is not None:
        opts.control, opts.treatment = control, list(treatments or [])
    experiment = experiment_for(opts, folder, variants=chosen, samples=built, write=write)
    if experiment is None:
        raise InputError("an experiment needs variants: pass variants=, or control= and treatments=, or declare them in omk.yaml")
    asyncio.run(experiment.execute(on_result))
    return experiment.finish()


def ablate(
    samples: SampleArg | Iterable[SampleArg],
    skill: PathArg,
    *,
    seed: int | None = None,
    trivial: float = 0.1,
    on_result: Callable[[str, SampleResult], None] | None = None,
    **options: Unpack[RunOptions],
) -> ExperimentOutcome:
    """What each part of a skill is worth: `omk eval SAMPLES --ablate SKILL_DIR`.

    Runs an experiment whose control is the whole skill folder `skill` (`whole-skill`) and whose
    treatments are the skill without one part each (`without-<part>`): each section of its
    SKILL.md and, for `claude:` and `codex:` targets, each reference file. The other keywords are
    `evaluate`'s (`target` a spec string). Returns an `ExperimentOutcome` whose `.ablation` (an
    `omk.Ablation`) ranks the parts by the composite lost when each is removed, largest first,
    each an `omk.AblationPart` with its interval, tokens, verdict and `candidate` (to cut). With
    `out`, the copies of the skill are kept in `.omk/ablation/` for a resume; without, in a
    temporary folder removed when the run is done.
    """
    import asyncio

    from omk.engine.run_kind import experiment_for

    if options.get("target") is not None and not isinstance(options["target"], str):
        raise TypeError("ablate builds each variant's target from settings: give target as a spec string")
    opts, folder, built, write = prepare_options(samples, **options)
    opts.ablate, opts.seed, opts.trivial = str(skill), seed, trivial
    experiment = experiment_for(opts, folder, samples=built, write=write)
    assert experiment is not None  # an ablation is always an experiment
    try:
        asyncio.run(experiment.execute(on_result))
        return experiment.finish()
    finally:
        experiment.remove_scratch()


def read_report(run: str | PathLike[str]) -> ReportDocument:
    """A finished run read back, typed: its folder (or its report.json), as `omk eval`, `omk merge`
    or `evaluate(..., out=...)` wrote it. A run's results are read one at a time as a caller walks
    them; a file edited into a shape omk never writes is an `InputError` naming the file and field."""
    from omk.records.document import read_document

    return read_document(Path(run))
