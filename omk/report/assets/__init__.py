"""The style sheets and scripts of report.html, kept as files of the package beside this module.

- report.css, report.js: every page; the script filters and sorts the table and shows the panels.
- paged.css, paged.js: the page of a large run; the script draws the table from the embedded data,
  one page of rows at a time, and a result's panel from its tree (omk/report/html_panel.py).
- experiment.css, experiment.js: the experiment section; the script sorts its `table.sortable`
  tables by the clicked header (Enter or Space too), by each cell's `data-v`, numerically under a
  `num` header, empty values (no score) last in both directions, ties in the original order.

A file is read the first time a page needs it, then kept.
"""

from __future__ import annotations

from functools import cache


@cache
def text(name: str) -> str:
    """The file `name` as the page holds it: after a line break, so it starts on a line of its
    own after its `<style>` or `<script>` tag."""
    from importlib import resources  # only when a page is rendered: it costs an import of its own

    return "\n" + resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
