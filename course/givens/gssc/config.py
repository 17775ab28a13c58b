"""How a context is built (budget, reserve, weights) and the error for a budget too small."""
from __future__ import annotations

import math
from dataclasses import dataclass


class BudgetError(ValueError):
    """The token budget cannot hold what must always be sent."""


@dataclass(frozen=True)
class ContextConfig:
    """How a context is built.

    budget            tokens for the whole request: the context plus the answer
    reserve           tokens kept free for the answer (the context may use budget - reserve)
    relevance_weight  score = priority * (relevance_weight * relevance + recency_weight * recency)
    recency_weight
    min_relevance     candidates less relevant than this are dropped before the fill
    half_life_hours   recency halves every this many hours
    diversity         0 = off; above 0, a candidate's score is lowered by diversity times its
                      largest word overlap with what is already chosen (near-duplicates lose)
    """

    budget: int = 8000
    reserve: int = 1000
    relevance_weight: float = 0.7
    recency_weight: float = 0.3
    min_relevance: float = 0.1
    half_life_hours: float = 24.0
    diversity: float = 0.0

    def __post_init__(self):
        for name in ("budget", "reserve"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a whole number of tokens >= 0, got {value!r}")
        if self.reserve >= self.budget:
            raise ValueError(f"reserve ({self.reserve}) must be smaller than budget ({self.budget})")
        for name in ("relevance_weight", "recency_weight"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        for name in ("min_relevance", "diversity"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
                raise ValueError(f"{name} must be between 0 and 1, got {value!r}")
        if not (isinstance(self.half_life_hours, (int, float)) and self.half_life_hours > 0):
            raise ValueError(f"half_life_hours must be > 0, got {self.half_life_hours!r}")

    @property
    def limit(self) -> int:
        """Tokens the context itself may use."""
        return self.budget - self.reserve
