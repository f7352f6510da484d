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

import msgspec

from omk.core.errors import ConfigError, InputError
from omk.evolve.evaluate import EvolveOutcome
from omk.records.wire import decode

FILE = "state.json"
FORMAT = "omk-evolve-state/1"


class BudgetStop(Exception):
    """The budget is spent: the next call would start past it."""


def fingerprint(settings: dict[str, Any], skill_text: str, sample_ids: list[str]) -> str:
    data = json.dumps({"settings": settings, "skill": skill_text, "samples": sorted(sample_ids)}, sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()[:32]


class SavedLedger(msgspec.Struct):
    """state.json as written and read back (a field of the wrong type is refused, one line)."""

    format: str = ""
    key: str = ""
    spent_usd: float = 0.0
    outcomes: dict[str, dict[str, EvolveOutcome]] = {}  # "<digest>:<split>" → by sample id
    answers: dict[str, str] = {}  # round → the improver's answer


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
            state = decode(path.read_bytes(), SavedLedger, str(path), "; remove it or choose another --out")
        except OSError as exc:
            raise ConfigError(f"{path}: not a readable evolve state ({exc}); remove it or choose another --out") from exc
        except InputError as exc:
            raise ConfigError(str(exc)) from None
        if state.format != FORMAT or state.key != key:
            raise ConfigError(f"{path}: written by an evolve run with other settings, samples or skill; choose another --out")
        ledger.spent_usd = state.spent_usd
        ledger.outcomes = state.outcomes
        ledger.answers = {int(k): v for k, v in state.answers.items()}
        return ledger

    def save(self) -> None:
        answers = {str(k): v for k, v in self.answers.items()}
        state = SavedLedger(FORMAT, self.key, round(self.spent_usd, 8), self.outcomes, answers)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_bytes(msgspec.json.format(msgspec.json.encode(state), indent=0) + b"\n")
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
