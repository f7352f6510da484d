"""The one way text reaches the terminal through rich: as plain text, never as markup.

rich reads a `str` it prints, or holds as a table's cell, header, title or caption, as console
markup: `[/x]` in a sample's category would stop the command with a MarkupError, `[bold red]`
would recolour the rest of the line, `:warning:` would become an emoji, and an escape sequence
(`\\x1b[2J`) would reach the terminal whole. Everything shown is therefore made `plain` first:
control and bidirectional characters escaped (omk.io.textsafe.for_terminal), held in a `Text`, which
rich never parses.

* `plain(text, style)` — a `Text` of `text`, escaped.
* `PlainTable` — a rich Table whose headers, cells, title and caption given as `str` are plain,
  and which fits the width it is printed in without breaking a word: each column gets at least
  its longest word; the columns that fit whole get their full width first, the others share the
  rest and wrap between words. When even the longest words do not fit, the columns marked
  `drop=N` are left out (1 first, the caption names them), and what still does not fit is cut
  with an ellipsis, never folded over two lines.
* `PlainConsole` — a Console (the commands' own, omk.cli.console.make_console) on which a `str`
  is plain wherever rich renders one, and whatever text a renderable still holds has its
  control characters escaped as it is written: a forgotten call cannot recolour the terminal.

tests/test_terminal_text.py checks that the CLI and the report code build rich tables, panels and
consoles only here, and pass no interpolated string to rich without `plain` or `for_terminal`.
"""

from __future__ import annotations

from collections.abc import Iterable
from copy import copy
from dataclasses import replace
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.panel import Panel
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from omk.io.textsafe import for_terminal


def plain(text: object, style: str = "", **options: Any) -> Text:
    """`text` as rich shows it literally: escaped for the terminal, never read as markup."""
    return Text(for_terminal(text), style=style, **options)


def _cell(value: Any) -> Any:
    return plain(value) if isinstance(value, str) else value


class PlainTable(Table):
    """A rich Table whose `str` headers, cells, title and caption are plain text, fitted to the
    width without breaking a word."""

    def __init__(self, *headers: Any, lang: str = "en", **options: Any) -> None:
        self._drop: dict[int, int] = {}  # a column's index: the order in which it gives way to the width
        self._lang = lang  # of the caption naming the columns left out
        for key in ("title", "caption"):  # in the style rich gives a `str` title or caption
            if isinstance(options.get(key), str):
                options[key] = plain(options[key], style=options.get(f"{key}_style") or f"table.{key}")
        super().__init__(*(_cell(h) for h in headers), **options)

    def add_column(self, header: Any = "", *args: Any, drop: int | None = None, **options: Any) -> None:
        """`drop`: when the table does not fit even with its words whole, the columns marked are
        left out, the lowest number first."""
        options["overflow"] = "ellipsis"  # a word wider than its column is cut, never folded
        super().add_column(_cell(header), *args, **options)
        if drop is not None:
            self._drop[len(self.columns) - 1] = drop

    def add_row(self, *cells: Any, **options: Any) -> None:
        super().add_row(*(_cell(c) for c in cells), **options)


    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from Table.__rich_console__(self._fitted(console, options), console, options)

    def _fitted(self, console: Console, options: ConsoleOptions) -> Table:
        """This table, or a copy with the columns' widths set (and some left out) to fit."""
        room = (self.width or options.max_width) - self._extra_width
        columns = list(self.columns)
        order = sorted((n, i) for i, n in self._drop.items())
        left_out: list[Any] = []
        while True:
            ranges = [self._measure(console, options.update_width(room), c) for c in columns]
            if sum(r.maximum for r in ranges) <= room and not left_out:
                return self
            if sum(r.minimum for r in ranges) <= room or not order:
                break
            gone = self.columns[order.pop(0)[1]]
            columns.remove(gone)
            left_out.append(gone.header)
        fitted = copy(self)
        fitted.columns = [replace(c, _index=i) for i, c in enumerate(columns)]
        for column, width in zip(fitted.columns, _share(ranges, room), strict=True):
            column.width = max(1, width - fitted._get_padding_width(column._index))
        if left_out:
            names = ", ".join(h.plain if isinstance(h, Text) else str(h) for h in left_out)
            from omk.report.i18n import t

            note = f"{t('left out to fit the width', self._lang)}: {names}"
            fitted.caption = plain(note if fitted.caption is None else f"{_text(fitted.caption)} · {note}", style="table.caption")
        return fitted


    def _measure(self, console: Console, options: ConsoleOptions, column: Any) -> Measurement:
        """A column's width range; a column that never wraps needs its whole width."""
        found = self._measure_column(console, options, column)
        return Measurement(found.maximum, found.maximum) if column.no_wrap else found


def _text(value: Any) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def _share(ranges: list[Measurement], room: int) -> list[int]:
    """Column widths summing to at most `room`: each at least its longest word (its minimum) when
    they fit; the columns that fit whole get their full width, narrowest need first; the others
    share what is left. When the minimums do not fit, they are cut down evenly."""
    widths = [r.minimum for r in ranges]
    if sum(widths) > room:
        from rich._ratio import ratio_reduce

        return ratio_reduce(sum(widths) - room, [1] * len(widths), widths, widths)
    spare = room - sum(widths)
    wanting = sorted(range(len(ranges)), key=lambda i: ranges[i].maximum - ranges[i].minimum)
    for n, i in enumerate(wanting):
        need = ranges[i].maximum - widths[i]
        if need <= spare:
            widths[i] += need
            spare -= need
            continue
        rest = wanting[n:]  # these wrap between words: the room left is shared by how much each wants
        total = sum(ranges[j].maximum - widths[j] for j in rest)
        for j in rest:
            widths[j] += (ranges[j].maximum - widths[j]) * spare // total
        break
    return widths


def panel(renderable: RenderableType, title: str = "", **options: Any) -> Panel:
    """A Panel whose title is plain text (rich reads a `str` title as markup)."""
    return Panel(renderable, title=plain(title) if title else None, **options)


class PlainConsole(Console):
    """A Console that reads no markup, no emoji codes, and writes no control character it was given."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**{**options, "markup": False, "emoji": False, "highlight": False})

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(for_terminal(text), **{**options, "markup": False, "emoji": False, "highlight": False})

    def render(self, renderable: Any, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            # rich's own cursor moves are control segments; text from anywhere else is escaped
            yield segment if segment.control else Segment(for_terminal(segment.text), segment.style)
