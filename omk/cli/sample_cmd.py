"""`omk sample`: samples drafted by a model from a skill (`omk sample SKILL_DIR --target SPEC`), or
recorded from a run (`omk sample --from-run RUN_DIR`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_GATE, EXIT_OK

DRAFT_ONLY = ("target", "n", "triggers", "tasks", "append", "timeout")


def run_sample(args: argparse.Namespace) -> int:
    from omk.errors import InputError

    if args.skill_dir and args.from_run:
        raise InputError("omk sample: give SKILL_DIR (draft samples from a skill) or --from-run RUN_DIR (record a run), not both")
    if not args.skill_dir and not args.from_run:
        raise InputError("omk sample: give SKILL_DIR (draft samples from a skill with --target SPEC) or --from-run RUN_DIR (record a run)")
    if args.skill_dir:
        return _draft(args)
    given = [f"--{name}" if name != "n" else "-n" for name in DRAFT_ONLY if getattr(args, name) not in (None, False)]
    if given:
        raise InputError(f"omk sample --from-run: {', '.join(given)} goes with SKILL_DIR (drafting from a skill)")
    return _from_run(args)


def _from_run(args: argparse.Namespace) -> int:
    from omk.authoring.from_run import samples_from_run
    from omk.errors import InputError

    out = Path(args.output) if args.output else None
    if out is not None and out.exists():
        raise InputError(f"{out}: already exists; choose another --output (recorded samples are not merged into a file)")
    found = samples_from_run(Path(args.from_run))
    for line in found.left_out:
        print(f"left out {line}", file=sys.stderr)
    if out is None:
        sys.stdout.write(found.text)
        return EXIT_OK
    out.write_text(found.text, encoding="utf-8")
    say(f"{out}: {found.count} {'sample' if found.count == 1 else 'samples'} recorded from {args.from_run}")
    return EXIT_OK


def _draft(args: argparse.Namespace) -> int:
    """Exit 0 when at least one sample was written, 1 when none was (every draft dropped or
    every call failed), 2 for bad input."""
    from omk.authoring.drafting import split_counts
    from omk.authoring.generate import GenerateOptions, generate
    from omk.textsafe import for_terminal

    counts = split_counts(args.n, args.triggers, args.tasks)
    out = Path(args.output) if args.output else None
    options = GenerateOptions(Path(args.skill_dir), args.target, counts, out, args.append, args.concurrency, args.timeout)
    made = generate(options)
    drafted = made.drafted
    for line in made.skill.left_out:
        print(for_terminal(f"not shown to the model: {made.skill.name}/{line}"), file=sys.stderr)
    for line in drafted.failures:
        print(for_terminal(line), file=sys.stderr)
    for line in drafted.dropped:
        print(for_terminal(f"dropped {line}"), file=sys.stderr)
    if not drafted.count:
        print(f"omk sample: no sample drafted from {args.skill_dir} ({counts.total} asked for); nothing written", file=sys.stderr)
        return EXIT_GATE
    repaired = f", {drafted.repaired} repaired" if drafted.repaired else ""
    summary = f"{drafted.count} of {counts.total} {'sample' if counts.total == 1 else 'samples'} drafted by {made.spec} from {made.skill.name}{repaired}"
    if out is None:
        sys.stdout.write(made.text)
        print(summary, file=sys.stderr)
        return EXIT_OK
    with out.open("a" if args.append else "x", encoding="utf-8", newline="") as f:
        f.write(made.text)
    say(f"{out}: {summary}{' (appended)' if args.append else ''}; review them before trusting them")
    return EXIT_OK
