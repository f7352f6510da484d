"""`omk sample`: samples drafted by a model from a skill (`omk sample SKILL_DIR --target SPEC`),
recorded from a run (`omk sample --from-run RUN_DIR`) or from Claude Code and Codex sessions
(`omk sample --from-session [PATH...]`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from omk.cli.console import say
from omk.cli.main import EXIT_GATE, EXIT_OK

if TYPE_CHECKING:
    from omk.authoring.generate import Generated

DRAFT_ONLY = ("target", "n", "triggers", "tasks", "append", "timeout")
SESSION_ONLY = ("project", "since", "skill", "limit")


def run_sample(args: argparse.Namespace) -> int:
    from omk.core.errors import InputError

    sources = [bool(args.skill_dir), bool(args.from_run), args.from_session is not None]
    if sum(sources) > 1:
        raise InputError("omk sample: give one of SKILL_DIR (draft samples from a skill), --from-run RUN_DIR (record a run) "
                         "or --from-session [PATH...] (record sessions)")
    if not any(sources):
        raise InputError("omk sample: give SKILL_DIR (draft samples from a skill with --target SPEC), --from-run RUN_DIR (record a run) "
                         "or --from-session [PATH...] (record Claude Code and Codex sessions)")
    mode = "SKILL_DIR" if args.skill_dir else "--from-run" if args.from_run else "--from-session"
    session_flags = [f"--{name}" for name in SESSION_ONLY if getattr(args, name) is not None]
    if session_flags and mode != "--from-session":
        raise InputError(f"omk sample {mode}: {', '.join(session_flags)} goes with --from-session")
    if args.skill_dir:
        return _draft(args)
    given = [f"--{name}" if name != "n" else "-n" for name in DRAFT_ONLY if getattr(args, name) not in (None, False)]
    if given:
        raise InputError(f"omk sample {mode}: {', '.join(given)} goes with SKILL_DIR (drafting from a skill)")
    return _from_run(args) if args.from_run else _from_session(args)


def _from_session(args: argparse.Namespace) -> int:
    import os

    from omk.authoring.from_session import SessionQuery, samples_from_session_files
    from omk.core.errors import InputError
    from omk.core.secrets import Masker
    from omk.io.textsafe import for_terminal
    from omk.report.i18n import counted, t
    from omk.sessions.finding import since_time
    from omk.settings.config import load_settings

    lang = args.lang or "en"
    out = Path(args.output) if args.output else None
    if out is not None and out.exists():
        raise InputError(f"{out}: already exists; choose another --output (recorded samples are not merged into a file)")
    project = Path(args.project) if args.project else None
    if project is not None and not project.is_dir():
        raise InputError(f"omk sample --project: {project} is not a folder")
    paths = tuple(Path(p) for p in args.from_session)
    for path in paths:
        if not path.exists():
            raise InputError(f"omk sample --from-session: {path}: no such file or folder")
    query = SessionQuery(paths, project, since_time(args.since, "omk sample --since"), args.skill, args.limit)
    mask = Masker.for_run(load_settings([], Path.cwd(), {}).blocks())
    recorded = samples_from_session_files(query, os.environ, mask, lang)
    for line in recorded.notes + [t("left out {line}", lang).format(line=line) for line in recorded.found.left_out]:
        say(for_terminal(mask(line)), err=True)
    if out is None:
        sys.stdout.write(recorded.found.text)
        return EXIT_OK
    out.write_text(recorded.found.text, encoding="utf-8")
    samples = counted(recorded.found.count, "sample", "samples", lang)
    files = counted(recorded.files, "session file", "session files", lang)
    say(t("{out}: {samples} recorded from {files}; review them before trusting them", lang).format(out=out, samples=samples, files=files))
    return EXIT_OK


def _from_run(args: argparse.Namespace) -> int:
    from omk.authoring.from_run import samples_from_run
    from omk.core.errors import InputError
    from omk.report.i18n import counted, t

    lang = args.lang or "en"
    out = Path(args.output) if args.output else None
    if out is not None and out.exists():
        raise InputError(f"{out}: already exists; choose another --output (recorded samples are not merged into a file)")
    from omk.core.secrets import Masker
    from omk.settings.config import load_settings

    mask = Masker.for_run(load_settings([], Path.cwd(), {}).blocks())  # the secrets `omk eval` here would mask, api_key_env's included
    found = samples_from_run(Path(args.from_run), mask, lang=lang, out=out)
    for line in found.left_out:
        say(mask(t("left out {line}", lang).format(line=line)), err=True)
    from omk.authoring.from_run import CHANGED

    for sample_id, inside, when in found.changed:
        said = t(CHANGED, lang).format(path=inside, when=when, started=found.started or "?")
        say(mask(f"{sample_id}: {said}"), err=True)
    if out is None:
        sys.stdout.write(found.text)
        return EXIT_OK
    found.write_workspaces(out.parent)  # what the recorded workspaces held, beside the samples file
    out.write_text(found.text, encoding="utf-8")
    recorded = t("{out}: {samples} recorded from {run}", lang)
    say(recorded.format(out=out, samples=counted(found.count, "sample", "samples", lang), run=args.from_run))
    _say_settings_left_behind(Path(args.from_run), out, lang)
    return EXIT_OK


def _say_settings_left_behind(run: Path, out: Path, lang: str) -> None:
    """The omk.yaml that gave the run its target and skills, when `omk eval OUT` would not read it,
    with the command that writes the samples beside it (it runs as printed)."""
    import shlex

    from omk.authoring.from_run import settings_left_behind
    from omk.report.i18n import t

    config = settings_left_behind(run, out, Path.cwd())
    if config is None:
        return
    beside = config.parent / out.name
    shown = beside.relative_to(Path.cwd()) if beside.is_relative_to(Path.cwd()) else beside
    command = shlex.join(["omk", "sample", "--from-run", str(run), "--output", str(shown)])
    said = t("omk eval {out} will not read {config}, which gave the run its target and skills; write the samples beside it: {command}", lang)
    say(said.format(out=out, config=config.relative_to(Path.cwd()) if config.is_relative_to(Path.cwd()) else config, command=command), err=True)


def _draft(args: argparse.Namespace) -> int:
    """Exit 0 when at least one sample was written, 1 when none was (every draft dropped or
    every call failed), 2 for bad input."""
    from omk.authoring.drafting import split_counts
    from omk.authoring.generate import GenerateOptions, generate
    from omk.io.textsafe import for_terminal
    from omk.report.i18n import t

    counts = split_counts(args.n, args.triggers, args.tasks)
    out = Path(args.output) if args.output else None
    options = GenerateOptions(Path(args.skill_dir), args.target, counts, out, args.append, args.concurrency, args.timeout, lang=args.lang)
    made = generate(options)
    drafted, lang = made.drafted, made.lang
    for line in made.skill.left_out:
        say(for_terminal(t("not shown to the model: {file}", lang).format(file=f"{made.skill.name}/{line}")), err=True)
    for line in drafted.failures:
        say(for_terminal(line), err=True)
    for line in drafted.dropped:
        say(for_terminal(t("dropped {line}", lang).format(line=line)), err=True)
    if not drafted.count:
        nothing = t("omk sample: no sample drafted from {skill_dir} ({total} asked for); nothing written", lang)
        say(nothing.format(skill_dir=args.skill_dir, total=counts.total), err=True)
        return EXIT_GATE
    summary = _summary(made, counts.total, lang)
    if out is None:
        sys.stdout.write(made.text)
        say(summary, err=True)
        return EXIT_OK
    with out.open("a" if args.append else "x", encoding="utf-8", newline="") as f:
        f.write(made.text)
    appended = t(" (appended)", lang) if args.append else ""
    say(t("{out}: {summary}{appended}; review them before trusting them", lang).format(out=out, summary=summary, appended=appended))
    return EXIT_OK


def _summary(made: Generated, total: int, lang: str) -> str:
    """`3 of 4 samples drafted by SPEC from SKILL, 1 repaired`, in `lang`."""
    from omk.report.i18n import t

    drafted = made.drafted
    samples = "sample" if total == 1 else "samples"
    line = t("{count} of {total} {samples} drafted by {spec} from {skill}", lang)
    repaired = t(", {n} repaired", lang).format(n=drafted.repaired) if drafted.repaired else ""
    return line.format(count=drafted.count, total=total, samples=samples, spec=made.spec, skill=made.skill.name) + repaired
