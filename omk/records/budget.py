"""report.json's `budget` block (docs/report-format.md): a run given `--budget-usd` (or
`budget_usd:` / `budget_per_sample_usd:` in omk.yaml), what it spent and what it left undone.

`spent_usd` counts this invocation's target and judge calls (a cached answer costs nothing);
`stopped` says the budget was reached and some runs were not started; `not_run` lists them, each
a (sample_id, repeat) that `omk eval --resume RUN_DIR` runs later.
"""

from __future__ import annotations

from typing import Any

from omk.frozen import record
from omk.records.fields import Fields


@record
class NotRun:
    """One run the budget left out: it has no result and no line in results.jsonl."""

    sample_id: str
    repeat: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"sample_id": self.sample_id, "repeat": self.repeat, "reason": "budget"}


@record
class BudgetBlock:
    limit_usd: float
    spent_usd: float
    not_run: tuple[NotRun, ...] = ()

    @property
    def stopped(self) -> bool:
        """Whether the budget left runs undone (the run is incomplete: exit code 3)."""
        return bool(self.not_run)

    def to_json(self) -> dict[str, Any]:
        return {
            "limit_usd": self.limit_usd,
            "spent_usd": self.spent_usd,
            "stopped": self.stopped,
            "not_run": [n.to_json() for n in self.not_run],
        }

    @classmethod
    def from_json(cls, f: Fields | None) -> BudgetBlock | None:
        if f is None:
            return None
        not_run = tuple(NotRun(n.str("sample_id") or "", n.int("repeat", 0)) for n in f.objs("not_run"))
        return cls(limit_usd=f.num("limit_usd", 0.0), spent_usd=f.num("spent_usd", 0.0), not_run=not_run)
