"""`omk power RUN_DIR [--effect D]`: parse, print (the figures are omk.engine.power_run's)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from omk.cli.main import EXIT_OK


def run_power(args: argparse.Namespace) -> int:
    from omk.cli.console import say
    from omk.engine.power_run import power_of_run

    figures = power_of_run(Path(args.run_dir), args.effect)
    if args.json:
        say(json.dumps([f.to_json() for f in figures], indent=2))
        return EXIT_OK
    say(f"paired t-test on the composite, two-sided, α {figures[0].alpha:g}, {100 * figures[0].power:.0f}% power")
    for f in figures:
        say("\n".join(power_lines(f.to_json())))
    return EXIT_OK


def power_lines(data: dict) -> list[str]:
    name = f"{data['treatment']} vs {data['control']}" if data["control"] else f"{data['treatment']} (a comparison against it)"
    within = f", run to run {data['run_to_run_sd']:.3f}" if data["run_to_run_sd"] is not None else " (one repeat: run-to-run noise not separable)"
    detect = f"{data['detectable']:.3f}" if data["detectable"] is not None else "n/a"
    needs = " · ".join(
        f"{n['repeats']} repeat(s): {n['samples'] if n['samples'] is not None else 'n/a'}" for n in data["samples_needed"]
    )
    head = f"{name}: {data['samples']} samples × {data['repeats']} repeat(s); spread between samples {data['between_sd']:.3f}{within}"
    if data.get("note"):
        return [head, f"  {data['note']}"]
    return [
        head,
        f"  this run detects differences of {detect} or more",
        f"  a difference of {data['effect']:g} needs (samples per repeat count): {needs}",
    ]
