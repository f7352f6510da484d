"""Preparing an evaluation: samples, settings, target, judge and the run folder (new or resumed)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from omk.core.errors import ConfigError
from omk.core.secrets import REDACTED, Masker
from omk.engine.inputs import build_target, load_inputs, resolve_samples, sample_paths, select
from omk.engine.options import EvalOptions
from omk.engine.results import ResultLog
from omk.engine.skill_checks import check_skill_names, installed_skills
from omk.engine.state import EvaluationState, RunFolder, new_run_id
from omk.records.manifest import RunManifest, RunSettings
from omk.samples.model import Sample
from omk.settings.config import ConfigFile, Settings, load_settings
from omk.targets.base import Target

if TYPE_CHECKING:
    from omk.engine.shards import Split

State = TypeVar("State", bound=EvaluationState)


def prepare(
    cls: type[State],
    options: EvalOptions,
    *,
    cwd: Path,
    samples: list[Sample] | None,
    target: Target | None,
    write: bool,
    paths: list[Path] | None = None,
    adjust: Callable[[Settings], None] | None = None,
    confirmed: Sequence[str] = (),
    check_skills: bool = True,
    config: ConfigFile | None = None,
) -> State:
    from omk.engine.checks import check_options
    from omk.judge import build_judge
    from omk.report import check_formats
    from omk.runner import resume as rs

    check_options(options)
    _check_target_object(target)
    manifest, hooks_confirmed = None, True
    if options.resume:
        run_dir = _absolute(Path(options.resume), cwd)
        manifest = rs.read_manifest(run_dir)
        confirmed, hooks_confirmed = [*confirmed, *_confirmed(options)], _samples_given_again(options, manifest, run_dir, cwd)
        options, cwd, config = _recorded_options(manifest, options, run_dir), _recorded_cwd(manifest, cwd), None  # its own omk.yaml
        paths = [Path(p) for p in manifest.samples_files]
    elif samples is not None:
        paths = list(paths or [])
    else:
        paths = sample_paths(options, cwd)
    files, warnings = paths, []
    if samples is None:
        loaded = load_inputs(options, paths, cwd, config)
        samples, files, warnings = loaded.samples, loaded.files, loaded.warnings
    settings = load_settings(paths, cwd, options.as_cli(), config)
    settings.cwd = cwd
    if adjust is not None:
        adjust(settings)  # an experiment's variant: its own system, skill, target or model
    if manifest is not None:
        command = rs.resume_command(run_dir, [settings.target], settings.judge, samples)
        rs.check_commands(run_dir, settings.target, settings.judge, set(confirmed), command)
        rs.check_hooks(run_dir, samples, hooks_confirmed, command)
    repeat = options.repeat or 1
    chosen, split = _split(options, settings, select(samples, options.filter), repeat)
    the_target = target if target is not None else _build(settings, options)
    skills = _check_target(the_target, settings, chosen, check_skills)
    judge = build_judge(settings)
    check_formats(settings.formats)
    if manifest is None and target is None:  # a new run: every job is still to do
        _check_before_run(the_target, settings, [(s, r) for s in chosen for r in range(repeat)], cwd, options)
    folder = _run_folder(None if manifest is None else (manifest, run_dir), the_target, settings, cwd, write and not options.dry_run)
    evaluation = cls(options, cwd, paths, list(files), settings, chosen, repeat, the_target, judge, folder)
    evaluation.warnings, evaluation.skills = list(warnings), skills
    if split is not None:  # `--shard I/N`: which part of the plan this is
        evaluation.shard, evaluation.shard_positions, evaluation.whole_plan = split.info, split.positions, split.whole
    _open_log(evaluation, resumed=manifest is not None, check=target is None)
    return evaluation


def _open_log(evaluation: EvaluationState, *, resumed: bool, check: bool) -> None:
    """The run's results log: a resumed run's results read back (then the target checked for what
    is left, when `check`), or a new run's record written."""
    from omk.runner.resume import RESULTS

    out_dir = evaluation.folder.out_dir
    evaluation.log = ResultLog(evaluation.samples, out_dir / RESULTS if out_dir is not None else None, Masker.for_run(evaluation.settings.blocks()))
    if resumed:
        evaluation.log.restore(evaluation.repeat)
        if check:
            _check_before_run(evaluation.target, evaluation.settings, evaluation.todo, evaluation.cwd, evaluation.options)
    elif out_dir is not None:
        _record(evaluation)


def _check_before_run(target: Target, settings: Settings, jobs: list[tuple[Sample, int]], cwd: Path, options: EvalOptions) -> None:
    """The target's checks before the run, unless the cache answers every job (no call will be
    made) or this is a dry run (no call of any kind, a check included)."""
    from omk.engine.preflight_check import check_before_run

    if not options.dry_run:
        check_before_run(target, settings, jobs, cwd, no_cache=options.no_cache)


def _split(options: EvalOptions, settings: Settings, samples: list[Sample], repeat: int) -> tuple[list[Sample], Split | None]:
    """This shard's part of the plan under `--shard I/N` and the split; else all of it, and None
    (the shards' module loads only for a split run)."""
    if not options.shard:
        return samples, None
    from omk.engine.shards import ShardSpec, take_shard

    choices = {
        "target": settings.target,
        "judge": settings.judge,
        "threshold": settings.threshold,
        "repeat": repeat,
        "filter": options.filter,
        "seed": options.seed,
    }
    split = take_shard(samples, ShardSpec.parse(options.shard), choices)
    return split.samples, split


def _build(settings: Settings, options: EvalOptions) -> Target:
    """The target the settings name; in a dry run without starting any program (not even
    `claude --version`: omk.io.process.no_programs)."""

    if not options.dry_run:
        return build_target(settings)
    from omk.io.process import no_programs

    with no_programs():
        return build_target(settings)


def _check_target_object(target: Target | None) -> None:
    if target is not None and not all(callable(getattr(target, m, None)) for m in ("run", "describe", "cache_identity", "close")):
        raise TypeError(f"target: expected a spec string or an object with run, describe, cache_identity and close, got {type(target).__name__}")


def _run_folder(
    resumed: tuple[RunManifest, Path] | None, target: Target, settings: Settings, cwd: Path, write: bool
) -> RunFolder:
    """The resumed run's folder (its target checked) or a new one, locked for this run: a second
    run in it stops here, before anything is written."""

    if resumed is not None:
        manifest, run_dir = resumed
        _same_target(manifest, target.describe(), run_dir)
        folder = RunFolder(manifest.run_id, manifest.started_at, run_dir, manifest)
    else:
        folder = _new_folder(settings, cwd, write)
    if folder.out_dir is not None:
        from omk.runner.folder_lock import claim_folder

        folder.lock = claim_folder(folder.out_dir)
    return folder


def _check_target(target: Target, settings: Settings, samples: list[Sample], check_skills: bool) -> tuple[str, ...] | None:
    """Check the samples against the target; return the skills it installs."""

    if (check := getattr(target, "check_samples", None)) is not None:
        check(samples)  # a replay file that records none of the samples
    skills = installed_skills(target, settings)
    if check_skills:
        check_skill_names(samples, [skills])
    return skills


def _absolute(path: Path, cwd: Path) -> Path:
    return (path if path.is_absolute() else cwd / path).resolve()


def _given(options: EvalOptions) -> dict[str, Any]:
    """The choices given for a resume, as the run folder's record names them (the samples files
    apart: giving them again confirms the run's hooks, `_samples_given_again`)."""
    return {k: v for k, v in options.as_cli().items() if k not in ("resume", "samples")}


def _samples_given_again(options: EvalOptions, manifest: RunManifest, run_dir: Path, cwd: Path) -> bool:
    """Whether this resume names the run's samples files again (which lets their hooks run,
    `check_hooks`); other files than the run's are refused."""
    from omk.core.errors import InputError
    from omk.runner.resume import MANIFEST

    if not options.samples:
        return False
    given = {str(p.resolve()) for p in resolve_samples(list(options.samples), cwd)}
    recorded = {str(Path(p).resolve()) for p in manifest.samples_files}
    if given != recorded:
        raise InputError(
            f"{run_dir / MANIFEST}: samples_files: --resume reruns the run's samples ({', '.join(sorted(recorded))}); "
            "give those again or none (start a new run for other samples)"
        )
    return True


def _confirmed(options: EvalOptions) -> list[str]:
    """The target and judge specs the user gave for a resume: on this command line, or in their
    own environment (OMK_TARGET, OMK_JUDGE), never in the run folder."""
    import os

    given = [options.target, os.environ.get("OMK_TARGET")]
    for judges in (options.judge, os.environ.get("OMK_JUDGE")):
        given += [j.strip() for j in judges.split(",")] if judges else []
    return [g for g in given if g]


def _recorded_options(manifest: RunManifest, given: EvalOptions, run_dir: Path) -> EvalOptions:
    """The run's recorded choices with what this resume may change, read by their types and
    checked like the command line's."""
    from omk.engine.checks import check_options
    from omk.runner import resume as rs

    recorded = rs.resume_cli(manifest.cli, _given(given))
    options = _no_redacted_spec(EvalOptions.from_record(recorded, str(run_dir / rs.MANIFEST)), run_dir)
    check_options(options)
    from omk.core.errors import InputError, Problem
    from omk.inline.policy import AllowRuleError, parse_allow_rule

    for i, entry in enumerate(options.url_allow or []):
        try:
            parse_allow_rule(entry)
        except AllowRuleError as exc:
            raise InputError([Problem(str(run_dir / rs.MANIFEST), None, "", f"cli.url_allow[{i}]", str(exc))]) from None
    return options


def _recorded_cwd(manifest: RunManifest, cwd: Path) -> Path:
    """A resumed run reads relative paths from the folder it started in, when that still exists."""
    recorded = Path(manifest.cwd)
    return recorded if recorded.is_dir() else cwd


def _new_folder(settings: Settings, cwd: Path, write: bool) -> RunFolder:

    started = datetime.now(UTC)
    run_id, started_at = new_run_id(started), started.isoformat(timespec="seconds")
    if not write:
        return RunFolder(run_id, started_at, None)
    out = _absolute(Path(settings.out), cwd) if settings.out else cwd / ".omk" / "runs" / run_id
    return RunFolder(run_id, started_at, out.resolve())


def _record(evaluation: EvaluationState) -> None:
    """run.json: what a later `--resume` needs to rebuild this run (never a secret)."""
    from omk.runner import resume as rs

    folder = evaluation.folder
    assert folder.out_dir is not None
    try:
        mask = Masker.for_run(evaluation.settings.blocks())  # a key written into --target or OMK_TARGET stays out
        rs.write_manifest(folder.out_dir, _manifest(evaluation), mask.value)
    except OSError as exc:
        raise ConfigError(f"{folder.out_dir}: cannot write the run folder: {exc.strerror or exc}; give another --out") from None


def _manifest(evaluation: EvaluationState) -> RunManifest:
    from omk.io.gitinfo import commit_of
    from omk.runner import resume as rs

    folder, settings = evaluation.folder, evaluation.settings
    shard = evaluation.shard
    return RunManifest(
        run_id=folder.run_id,
        started_at=folder.started_at,
        cwd=str(evaluation.cwd),
        samples_files=tuple(str(p.resolve()) for p in evaluation.paths),
        cli=rs.recorded_cli(evaluation.options.as_cli()),
        settings=public_settings(settings, evaluation.repeat),
        target=evaluation.target.describe(),
        judge=evaluation.judge.describe() if evaluation.judge is not None else None,
        git=commit_of(evaluation.paths[0]) if evaluation.paths else None,  # the samples' commit, for `omk view`
        shard=shard,  # a part of a split run: which part, the plan's fingerprint
        positions=tuple(evaluation.shard_positions or []) if shard is not None else (),  # its samples' places in the plan
    )


def _no_redacted_spec(options: EvalOptions, run_dir: Path) -> EvalOptions:
    """`options` of a resumed run, unless its target or judge spec had a secret masked out of it
    (run.json never holds one): it would run with `[redacted]` in place of the key."""
    for name in ("target", "judge"):
        spec = getattr(options, name, None)
        if isinstance(spec, str) and REDACTED in spec:
            raise ConfigError(
                f"{run_dir / 'run.json'}: cli.{name}: the recorded spec held a secret, which omk does not write down; "
                "start a new run instead"
            )
    return options


def _same_target(manifest: RunManifest, describe: dict[str, Any], run_dir: Path) -> None:
    recorded = manifest.target
    if recorded is not None and json.dumps(recorded, sort_keys=True) != json.dumps(describe, sort_keys=True, default=str):
        raise ConfigError(
            f"{run_dir / 'run.json'}: target: the run used {recorded.get('spec', recorded)!r} but it now resolves to "
            f"{describe.get('spec', describe)!r} (omk.yaml or the environment changed); start a new run instead"
        )


def public_settings(settings: Settings, repeat: int) -> RunSettings:
    """What run.json records of the settings: everything but provider blocks, which may hold keys."""
    return RunSettings(
        target=settings.target,
        judge=tuple(settings.judge),
        threshold=settings.threshold,
        concurrency=settings.concurrency,
        timeout=settings.timeout,
        retries=settings.retries,
        repeat=repeat,
        formats=tuple(settings.formats),
        lang=settings.lang,
        config_file=str(settings.config_file) if settings.config_file else None,
    )
