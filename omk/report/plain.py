"""The one way text reaches the terminal through rich: as plain text, never as markup.

rich reads a `str` it prints, or holds as a table's cell, header, title or caption, as console
markup: `[/x]` in a sample's category would stop the command with a MarkupError, `[bold red]`
would recolour the rest of the line, `:warning:` would become an emoji, and an escape sequence
(`\\x1b[2J`) would reach the terminal whole. Everything shown is therefore made `plain` first:
control and bidirectional characters escaped (omk.textsafe.for_terminal), held in a `Text`, which
rich never parses.

* `plain(text, style)` — a `Text` of `text`, escaped.
* `PlainTable` — a rich Table whose headers, cells, title and caption given as `str` are plain.
* `PlainConsole` — a Console (the commands' own, omk.cli.console.make_console) on which a `str`
  is plain wherever rich renders one, and whatever text a renderable still holds has its
  control characters escaped as it is written: a forgotten call cannot recolour the terminal.

tests/test_terminal_text.py checks that the CLI and the report code build rich tables, panels and
consoles only here, and pass no interpolated string to rich without `plain` or `for_terminal`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.panel import Panel
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from omk.textsafe import for_terminal


def plain(text: object, style: str = "", **options: Any) -> Text:
    """`text` as rich shows it literally: escaped for the terminal, never read as markup."""
    return Text(for_terminal(text), style=style, **options)


def _cell(value: Any) -> Any:
    return plain(value) if isinstance(value, str) else value


class PlainTable(Table):
    """A rich Table whose `str` headers, cells, title and caption are plain text."""

    def __init__(self, *headers: Any, **options: Any) -> None:
        for key in ("title", "caption"):  # in the style rich gives a `str` title or caption
            if isinstance(options.get(key), str):
                options[key] = plain(options[key], style=options.get(f"{key}_style") or f"table.{key}")
        super().__init__(*(_cell(h) for h in headers), **options)

    def add_column(self, header: Any = "", *args: Any, **options: Any) -> None:
        super().add_column(_cell(header), *args, **options)

    def add_row(self, *cells: Any, **options: Any) -> None:
        super().add_row(*(_cell(c) for c in cells), **options)


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
