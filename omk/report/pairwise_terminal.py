"""The pairwise judge's verdicts of an experiment (`experiment.pairwise`), as tables in the terminal:
per treatment compared with the control, every verdict, the tally, B's win rate and how often
the two orders disagreed."""

from __future__ import annotations

from typing import Any

from omk.report._legacy_pairwise import judges, rate_lines, targets, verdict_word, why


def print_pairwise(block: dict[str, Any], console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    for pair in block.get("pairs") or []:
        pair = {**pair, "judge": block.get("judge")}
        a, b = targets(pair)
        table = Table(title=Text(f"Pairwise: A = {a} · B = {b} · judge: {judges(pair, 'en')}"), title_justify="left")
        for col in ("sample", "key", "verdict", "reason"):
            table.add_column(col, overflow="fold")
        for v in pair["verdicts"]:
            table.add_row(Text(v["sample_id"]), Text(v["key"]), Text(verdict_word(v, "en")), Text(why(v)))
        console.print(table)
        s = pair["summary"]
        line = f"A better {s['a_better']} · B better {s['b_better']} · tie {s['ties']} · errored {s['errored']} · skipped {s['skipped']}"
        console.print(Text(line, style="bold"))
        for text in rate_lines(pair, "en"):
            console.print(Text(text))
