"""The treatment's win rate against the control under one comparison key, from pairwise
verdicts: its decisive count, the Wilson interval and the sign test (omk/stats/winrate.py says
why those)."""

from __future__ import annotations

import msgspec

from omk.stats.distributions import binomial_two_sided_p
from omk.stats.winrate import Proportion, wilson_interval


class WinRate(msgspec.Struct, frozen=True, gc=False):
    """The treatment's (B's) record against the control (A) under one comparison key."""

    key: str
    b_better: int
    a_better: int
    ties: int
    level: float = 0.95

    @property
    def decisive(self) -> int:
        return self.a_better + self.b_better

    @property
    def rate(self) -> float | None:
        return self.b_better / self.decisive if self.decisive else None

    @property
    def ci(self) -> Proportion | None:
        return wilson_interval(self.b_better, self.decisive, self.level) if self.decisive else None

    @property
    def p_value(self) -> float | None:
        return binomial_two_sided_p(self.b_better, self.decisive) if self.decisive else None
