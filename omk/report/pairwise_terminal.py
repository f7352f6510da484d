"""The pairwise judge's verdicts of an experiment (`experiment.pairwise`), as tables in the terminal:
per treatment compared with the control, every verdict, the tally, B's win rate and how often
the two orders disagreed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from omk.records.experiment_block import Pair
from omk.report.i18n import t
from omk.report.pairwise import judges, rate_lines, verdict_word


def print_pairwise(pairs: Sequence[Pair], console: Any, lang: str = "en") -> None:
    """Print the pairwise judge's comparisons of an experiment as the run ends."""
    from omk.report.plain import PlainTable as Table
    from omk.report.plain import plain

    for pair in pairs:
        a, b = pair.targets
        title = f"{t('Pairwise', lang)}: A = {a} · B = {b} · {t('judge', lang)}: {judges(pair, lang)}"
        table = Table(title=plain(title), title_justify="left")
        for col in ("sample", "key", "verdict", "reason"):
            table.add_column(t(col, lang))
        for v in pair.verdicts:
            table.add_row(plain(v.sample_id), plain(v.key), plain(verdict_word(v, lang)), plain(v.why))
        console.print(table)
        s = pair.tally
        line = (
            f"{t('A better', lang)} {s.a_better} · {t('B better', lang)} {s.b_better} · {t('tie', lang)} {s.ties} · "
            f"{t('errored', lang)} {s.errored} · {t('skipped', lang, 'pairwise')} {s.skipped}"
        )
        console.print(plain(line, style="bold"))
        for text in rate_lines(pair, lang):
            console.print(plain(text))
