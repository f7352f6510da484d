"""report.json's `budget` block (docs/report-format.md): a run given `--budget-usd` (or
`budget_usd:` / `budget_per_sample_usd:` in omk.yaml), what it spent and what it left undone.

`spent_usd` counts this invocation's target and judge calls (a cached answer costs nothing);
`stopped` says the budget was reached and some runs were not started; `not_run` lists them, each
a (sample_id, repeat) that `omk eval --resume RUN_DIR` runs later.

The records are msgspec structs (omk.records.wire); `stopped` is worked out from `not_run` rather
than kept, so the block's `to_json` writes it in its place.
"""

from __future__ import annotations

from typing import Any

from omk.records.wire import JsonRecord, Number


class NotRun(JsonRecord, frozen=True):
    """One run the budget left out: it has no result and no line in results.jsonl."""

    sample_id: str = ""
    repeat: int = 0
    reason: str = "budget"


class BudgetBlock(JsonRecord, frozen=True):
    limit_usd: Number = 0.0
    spent_usd: Number = 0.0
    not_run: tuple[NotRun, ...] = ()

    @property
    def stopped(self) -> bool:
        """Whether the budget left runs undone (the run is incomplete: exit code 3)."""
        return bool(self.not_run)

    def to_json(self) -> dict[str, Any]:
        written = super().to_json()
        return {"limit_usd": self.limit_usd, "spent_usd": self.spent_usd, "stopped": self.stopped, "not_run": written["not_run"]}
