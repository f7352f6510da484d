"""The pairwise verdicts of a two-target run, as a table in the terminal."""

from __future__ import annotations

from typing import Any


def print_pairwise(block: dict[str, Any], console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    a, b = (t.get("spec") if isinstance(t, dict) else t for t in block["targets"])
    table = Table(title=f"Pairwise: A = {a} · B = {b}", title_justify="left")
    for col in ("sample", "key", "verdict", "reason"):
        table.add_column(col, overflow="fold")
    for v in block["verdicts"]:
        verdict = {"a": "A better", "b": "B better", "tie": "tie"}.get(v["winner"]) if v["status"] == "ok" else v["status"]
        table.add_row(v["sample_id"], v["key"], verdict or "—", v["reason"] if v["status"] == "ok" else (v["error"] or ""))
    console.print(table)
    s = block["summary"]
    line = f"A better {s['a_better']} · B better {s['b_better']} · tie {s['ties']} · errored {s['errored']} · skipped {s['skipped']}"
    console.print(Text(line, style="bold"))
