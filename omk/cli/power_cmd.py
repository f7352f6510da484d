"""`omk power RUN_DIR [--effect D]`: parse, print (the figures are omk.engine.power_run's)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from omk.cli.main import EXIT_OK


def run_power(args: argparse.Namespace) -> int:
    from omk.cli.console import say
    from omk.engine.power_run import power_of_run
    from omk.report.i18n import t

    figures = power_of_run(Path(args.run_dir), args.effect)
    if args.json:
        say(json.dumps([f.to_json() for f in figures], indent=2))
        return EXIT_OK
    lang = args.lang
    head = t("paired t-test on the composite, two-sided, α {alpha}, {power}% power", lang)
    say(head.format(alpha=f"{figures[0].alpha:g}", power=f"{100 * figures[0].power:.0f}"))
    for f in figures:
        say("\n".join(power_lines(f.to_json(), lang)))
    return EXIT_OK


def power_lines(data: dict, lang: str = "en") -> list[str]:
    from omk.report.i18n import t, verdict_text

    if data["control"]:
        name = t("{treatment} vs {control}", lang).format(treatment=data["treatment"], control=data["control"])
    else:
        name = t("{treatment} (a comparison against it)", lang).format(treatment=data["treatment"])
    if data["run_to_run_sd"] is not None:
        within = t(", run to run {sd}", lang).format(sd=f"{data['run_to_run_sd']:.3f}")
    else:
        within = t(" (one repeat: run-to-run noise not separable)", lang)
    detect = f"{data['detectable']:.3f}" if data["detectable"] is not None else "n/a"
    needs = " · ".join(
        t("{repeats} repeat(s): {samples}", lang).format(repeats=n["repeats"], samples=n["samples"] if n["samples"] is not None else "n/a")
        for n in data["samples_needed"]
    )
    head = t("{name}: {samples} samples × {repeats} repeat(s); spread between samples {sd}{within}", lang).format(
        name=name, samples=data["samples"], repeats=data["repeats"], sd=f"{data['between_sd']:.3f}", within=within
    )
    if data.get("note"):
        return [head, f"  {verdict_text(data['note'], lang)}"]
    return [
        head,
        "  " + t("this run detects differences of {detect} or more", lang).format(detect=detect),
        "  " + t("a difference of {effect} needs (samples per repeat count): {needs}", lang).format(effect=f"{data['effect']:g}", needs=needs),
    ]
