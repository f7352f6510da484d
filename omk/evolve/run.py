"""`omk evolve` from start to end: the loop, the final check, the output folder, `--write`, and
the dry run's plan. The CLI only parses and prints (omk/cli/evolve_cmd.py).

The output folder holds `original/<skill>/` (a copy of the skill as it was), `candidates/` (each
candidate evaluated), `selected/<skill>/` (the skill the loop ended with), `skill.diff` (the
selected SKILL.md against the original), `final/` (the test split's experiment, when one ran),
`report.json`, `report.md` and `report.html`. `--write` copies the selected SKILL.md over the original only when
the final level is PROGRESS.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from omk.evolve import loop, report
from omk.evolve.html import page
from omk.evolve.loop import EvolveConfig
from omk.skillset import SKILL_FILE

if TYPE_CHECKING:
    from omk.evolve.report import EvolveReport


@dataclass(slots=True)
class Evolved:
    report: EvolveReport
    written: bool  # --write copied the selected skill back


def evolve(config: EvolveConfig, improver: str, *, write: bool = False) -> Evolved:
    """Run the loop with the improver target `improver` (a spec: openai:, anthropic:, cmd:)."""
    from omk.authoring.asker import TargetAsker

    asker = TargetAsker.open(improver, config.cwd)
    config.out.mkdir(parents=True, exist_ok=True)
    try:
        state = loop.start(config)
        loop.run_loop(state, lambda request: asyncio.run(asker.ask(request)))
        loop.final_check(state)
    finally:
        asyncio.run(asker.close())
    built = report.build_report(state)
    save(config, state.best.folder, built)
    written = write and built.level == "PROGRESS"
    if written:
        shutil.copyfile(state.best.folder / SKILL_FILE, config.skill / SKILL_FILE)
    return Evolved(built, written)


def save(config: EvolveConfig, selected: Any, built: EvolveReport) -> None:
    loop.copy_skill(selected, config.out / "selected")
    (config.out / "skill.diff").write_text(built.diff, encoding="utf-8")
    (config.out / "report.json").write_text(json.dumps(built.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (config.out / "report.md").write_text(report.markdown(built), encoding="utf-8")
    (config.out / "report.html").write_text(page(built), encoding="utf-8")
