"""What a loop has spent and what it has done, kept in `state.json` of its output folder so that a
loop the budget stopped resumes where it stopped.

The ledger records each skill's outcomes on each split (by the digest of its SKILL.md and the
split's name) and the improver's answer of each round. The same command run again with the same
`--out` reads it: the rounds already answered are not asked again and the evaluations already made
are not run again, so the loop takes the same decisions and pays only for what is left. A ledger
written for other settings, samples or another skill is refused, one line.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omk.errors import ConfigError
from omk.evolve.evaluate import EvolveOutcome

FILE = "state.json"
FORMAT = "omk-evolve-state/1"


class BudgetStop(Exception):
    """The budget is spent: the next call would start past it."""


def fingerprint(settings: dict[str, Any], skill_text: str, sample_ids: list[str]) -> str:
    data = json.dumps({"settings": settings, "skill": skill_text, "samples": sorted(sample_ids)}, sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()[:32]


def _outcome(data: dict[str, Any]) -> EvolveOutcome:
    return EvolveOutcome(
        str(data["sample_id"]), data.get("composite"), bool(data.get("passed")), tuple(bool(p) for p in data.get("probes", [])),
        tuple(str(n) for n in data.get("notes", [])), str(data.get("output") or ""), float(data.get("cost_usd") or 0.0),
    )  # fmt: skip


def _outcome_json(o: EvolveOutcome) -> dict[str, Any]:
    return {**o.to_json(), "notes": list(o.notes), "output": o.output}


@dataclass(slots=True)
class Ledger:
    path: Path
    key: str
    budget_usd: float | None = None
    spent_usd: float = 0.0
    outcomes: dict[str, dict[str, EvolveOutcome]] = field(default_factory=dict)  # "<digest>:<split>" → by sample id
    answers: dict[int, str] = field(default_factory=dict)  # round → the improver's answer

    @classmethod
    def open(cls, folder: Path, key: str, budget_usd: float | None) -> Ledger:
        path = folder / FILE
        ledger = cls(path, key, budget_usd)
        if not path.is_file():
            return ledger
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{path}: not a readable evolve state ({exc}); remove it or choose another --out") from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
            raise ConfigError(f"{path}: written by an evolve run with other settings, samples or skill; choose another --out")
        ledger.spent_usd = float(data.get("spent_usd") or 0.0)
        ledger.outcomes = {k: {i: _outcome(o) for i, o in v.items()} for k, v in (data.get("outcomes") or {}).items()}
        ledger.answers = {int(k): str(v) for k, v in (data.get("answers") or {}).items()}
        return ledger

    def save(self) -> None:
        data = {
            "format": FORMAT, "key": self.key, "spent_usd": round(self.spent_usd, 8),
            "outcomes": {k: {i: _outcome_json(o) for i, o in v.items()} for k, v in self.outcomes.items()},
            "answers": {str(k): v for k, v in self.answers.items()},
        }  # fmt: skip
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
        temporary.replace(self.path)

    def check(self) -> None:
        """Raise BudgetStop when the budget is spent (called before each paid step)."""
        if self.budget_usd is not None and self.spent_usd >= self.budget_usd:
            raise BudgetStop

    @property
    def remaining(self) -> float | None:
        """What is left of the budget (None: no budget)."""
        return None if self.budget_usd is None else max(0.0, self.budget_usd - self.spent_usd)

    def spend(self, usd: float) -> None:
        self.spent_usd += usd
        self.save()
