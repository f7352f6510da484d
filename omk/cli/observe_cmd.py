"""`omk observe [PATH...]`: parse, print (the analysis is omk.sessions.observe's)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from omk.cli.main import EXIT_OK
from omk.core.errors import InputError
from omk.sessions.finding import since_time


def run_observe(args: argparse.Namespace) -> int:
    from omk.cli.console import say
    from omk.report.i18n import t
    from omk.report.observe import observation_lines
    from omk.sessions.observe import ObserveOptions, observe_paths, session_mask

    env = dict(os.environ)
    options = ObserveOptions(since=since_time(args.since), limit=args.limit, mask=session_mask(env), env=env)
    for given in args.paths:
        if not Path(given).exists():
            raise InputError(f"{given}: no such session file or folder")
    skills = [Path(d) for d in args.skills or []]
    for folder in skills:
        if not folder.is_dir():
            raise InputError(f"--skills {folder}: not a folder (give a skill folder or a folder of skill folders)")
    if args.write_probes:
        from omk.authoring.observed_probes import check_probes_path

        check_probes_path(Path(args.write_probes))
    observation = observe_paths([Path(p) for p in args.paths], skills, options, env)
    for warning in observation.warnings:
        say(f"omk observe: {warning}", err=True)
    if not observation.sessions and not observation.subagent_sessions:
        hint = "no session files found; name session files or folders (e.g. ~/.claude/projects ~/.codex/sessions)"
        say(f"omk observe: {t(hint, args.lang)}", err=True)
    if args.write_probes:
        from omk.authoring.observed_probes import write_probes

        made = write_probes(observation, Path(args.write_probes))
        skipped = f" ({made.left_out} {t('near-duplicates left out', args.lang)})" if made.left_out else ""
        say(f"{t('trigger probes written', args.lang)}: {made.samples} → {args.write_probes}{skipped}", err=True)
    if args.json:
        say(json.dumps(observation.to_json(), indent=2, ensure_ascii=False))
    else:
        say("\n".join(observation_lines(observation, args.lang)))
    return EXIT_OK
