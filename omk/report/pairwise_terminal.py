"""The pairwise judge's verdicts of an experiment (`experiment.pairwise`), as tables in the terminal:
per treatment compared with the control, every verdict, the tally, B's win rate and how often
the two orders disagreed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from omk.records.experiment_block import Pair
from omk.report.pairwise import judges, rate_lines, verdict_word


def print_pairwise(pairs: Sequence[Pair], console: Any) -> None:
    """Print the pairwise judge's comparisons of an experiment as the run ends."""
    from rich.table import Table
    from rich.text import Text

    for pair in pairs:
        a, b = pair.targets
        table = Table(title=Text(f"Pairwise: A = {a} · B = {b} · judge: {judges(pair, 'en')}"), title_justify="left")
        for col in ("sample", "key", "verdict", "reason"):
            table.add_column(col, overflow="fold")
        for v in pair.verdicts:
            table.add_row(Text(str(v.sample_id)), Text(str(v.key)), Text(verdict_word(v, "en")), Text(v.why))
        console.print(table)
        s = pair.tally
        line = f"A better {s.a_better} · B better {s.b_better} · tie {s.ties} · errored {s.errored} · skipped {s.skipped}"
        console.print(Text(line, style="bold"))
        for text in rate_lines(pair, "en"):
            console.print(Text(text))
