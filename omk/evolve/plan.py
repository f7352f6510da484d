"""`omk evolve --dry-run`: the calls, tokens and cost of the whole loop at most, calling nothing.

The samples are loaded and split as the loop would; each split's runs are estimated as `omk eval
--dry-run` estimates a run (omk.engine.estimate, with the cache's outputs where it has them), and
counted as often as the loop can run them: train once for the original and once per round (an
accepted candidate), selection once for the original and once per candidate of every round, test
twice (the original and the selected skill). The improver makes one call a round; its request is
the skill and the train prompts, its answer K skills.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omk.domain.skillset import SKILL_FILE
from omk.evolve import splits
from omk.evolve.evaluate import prepare
from omk.evolve.improver import MAX_FAILURES
from omk.evolve.loop import EvolveConfig
from omk.report.i18n_evolve import t

if TYPE_CHECKING:
    from omk.engine.estimate import Estimate, ModelLine

REQUEST_OVERHEAD = 200  # tokens of the request's instructions and headings, and per failure shown


def plan_lines(config: EvolveConfig, improver: str, lang: str = "en") -> list[str]:
    from omk.authoring.asker import TargetAsker
    from omk.engine.estimate import ModelLine, count_tokens, estimate, model_price

    whole = prepare(config.options, config.cwd, None, config.skill)
    split = splits.split_samples(whole.samples, config.shares, config.seed, config.alpha, config.tests)
    by_id = {s.sample_id: s for s in whole.samples}
    times = {"train": 1 + config.rounds, "selection": 1 + config.rounds * config.candidates, "test": 2}
    lines: dict[tuple[str, str], ModelLine] = {}
    runs = 0
    for name in splits.SPLITS:
        part = estimate([prepare(config.options, config.cwd, [by_id[i] for i in split.of(name)], config.skill)])
        runs += part.jobs * times[name]
        _add(lines, part, times[name])
    skill_tokens = count_tokens((config.skill / SKILL_FILE).read_text(encoding="utf-8-sig"))
    shown = [by_id[i] for i in split.train][:MAX_FAILURES]
    request = REQUEST_OVERHEAD + skill_tokens + sum(count_tokens(s.prompt) + REQUEST_OVERHEAD for s in shown)
    asker = TargetAsker.open(improver, config.cwd)
    name, price = model_price(asker.target)
    improver_line = ModelLine("improver", name, config.rounds, request * config.rounds, skill_tokens * config.candidates * config.rounds, price)
    all_lines = [*lines.values(), improver_line]
    total = sum(c for m in all_lines if (c := m.cost_usd) is not None)
    head = "dry run: nothing was called; split train {train} / selection {selection} / test {test}; at most {runs} sample run(s) over {rounds} round(s) of {candidates} candidate(s)"
    out = [
        t(head, lang).format(
            train=len(split.train), selection=len(split.selection), test=len(split.test), runs=runs, rounds=config.rounds, candidates=config.candidates
        )
    ]
    for m in all_lines:
        cost = t("no known price", lang) if m.cost_usd is None else f"${m.cost_usd:.4f}"
        line = t("  {role} {name}: {calls} call(s), ~{input} prompt + ~{output} output tokens, {cost}", lang)
        out.append(line.format(role=t(m.role, lang), name=m.name, calls=m.calls, input=m.input_tokens, output=m.output_tokens, cost=cost))
    out.append(_total_line(total, [m.name for m in all_lines if m.cost_usd is None], lang))
    return out


def _total_line(total: float, unpriced: list[str], lang: str = "en") -> str:
    """The most the loop can cost; with calls of no known price, what is known of it, said so
    (`$0.0000` alone would read as free)."""
    if not unpriced:
        return t("estimated cost at most: ${total}", lang).format(total=f"{total:.4f}")
    names = ", ".join(dict.fromkeys(unpriced))
    if total == 0:
        return t("estimated cost: unknown (no known price for {names})", lang).format(names=names)
    return t("estimated cost at most: ${total} for the priced calls; not counted: no known price for {names}", lang).format(total=f"{total:.4f}", names=names)


def _add(lines: dict[tuple[str, str], ModelLine], part: Estimate, times: int) -> None:
    from omk.engine.estimate import ModelLine

    for m in part.lines:
        line = lines.setdefault((m.role, m.name), ModelLine(m.role, m.name, price=m.price))
        line.calls += m.calls * times
        line.input_tokens += m.input_tokens * times
        line.output_tokens += m.output_tokens * times
