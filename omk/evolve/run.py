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

from omk.domain.skillset import SKILL_FILE
from omk.evolve import loop, report
from omk.evolve.html import page
from omk.evolve.loop import EvolveConfig

if TYPE_CHECKING:
    from omk.authoring.asker import TargetAsker
    from omk.evolve.report import EvolveReport


@dataclass(slots=True)
class Evolved:
    report: EvolveReport
    written: bool  # --write copied the selected skill back


def evolve(config: EvolveConfig, improver: str, *, write: bool = False, lang: str = "en") -> Evolved:
    """Run the loop with the improver target `improver` (a spec: openai:, anthropic:, cmd:). A loop
    the budget stops keeps what it did (the report says STOPPED); the same command resumes it.
    report.md and report.html are written in `lang`; report.json keeps omk's English."""
    from omk.authoring.asker import TargetAsker
    from omk.evolve.ledger import BudgetStop

    asker = TargetAsker.open(improver, config.cwd)
    try:
        state = loop.start(config)
        try:
            loop.begin(state)
            loop.run_loop(state, lambda request: asyncio.run(_ask(asker, request)))
            loop.final_check(state)
        except BudgetStop:
            spent = state.ledger.spent_usd if state.ledger is not None else 0.0
            state.stopped, state.final = True, None
            state.stop = f"the budget: ${spent:.4f} of ${config.budget_usd:.4f} spent; run the same command again to resume"
    finally:
        asyncio.run(asker.close())
    built = report.build_report(state)
    save(config, state.best.folder, built, lang)
    written = write and built.level == "PROGRESS"
    if written:
        shutil.copyfile(state.best.folder / SKILL_FILE, config.skill / SKILL_FILE)
    return Evolved(built, written)


async def _ask(asker: TargetAsker, request: str) -> tuple[str, float]:
    """The improver's answer and what it cost (as TargetAsker.ask, keeping the cost)."""
    from omk.llm.retry import call_with_retry
    from omk.samples.model import Sample

    sample = Sample(sample_id="omk-evolve-improver", prompt=request)

    async def call(_attempt: int) -> Any:
        return await asker.target.run(sample, request)

    result, _ = await call_with_retry(call, asker.timeout, asker.policy)
    return result.output, float(result.trace.cost_usd or 0.0)


def save(config: EvolveConfig, selected: Any, built: EvolveReport, lang: str = "en") -> None:
    loop.copy_skill(selected, config.out / "selected")
    (config.out / "skill.diff").write_text(built.diff, encoding="utf-8")
    (config.out / "report.json").write_text(json.dumps(built.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (config.out / "report.md").write_text(report.markdown(built, lang), encoding="utf-8")
    (config.out / "report.html").write_text(page(built, lang), encoding="utf-8")
