"""A table of English phrases and what they become in another language, applied in order.

The reports keep omk's messages in English (report.json, the doctor's JSON); `--lang zh` says
them again phrase by phrase through such tables: each row a regular expression and its
replacement (a template with `\\1` groups, or a function of the match).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

Said = str | Callable[[re.Match[str]], str]
Compiled = list[tuple[re.Pattern[str], Said]]


def compiled(table: Iterable[tuple[str, Said]], flags: int = 0) -> Compiled:
    return [(re.compile(pattern, flags), said) for pattern, said in table]


def rewrite(text: str, table: Compiled) -> str:
    """`text` with every row of `table` applied, in the table's order."""
    for pattern, said in table:
        text = pattern.sub(said, text)
    return text
