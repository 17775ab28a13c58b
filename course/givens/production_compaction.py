"""A circuit breaker for the summariser: after `max_failures` consecutive failures it opens and
the summariser is not called again. Production data in the textbook: many sessions were stuck
retrying a compaction that kept failing, paying for every attempt."""
from __future__ import annotations


class CircuitBreaker:
    def __init__(self, max_failures: int = 3):
        if not isinstance(max_failures, int) or max_failures < 1:
            raise ValueError(f"max_failures must be a positive integer, got {max_failures!r}")
        self.max_failures = max_failures
        self.failures = 0          # consecutive
        self.total_failures = 0
        self.calls = 0             # times the summariser was called
        self.is_open = False

    def allow(self) -> bool:
        """May the summariser be called now?"""
        return not self.is_open

    def record_failure(self) -> None:
        self.failures += 1
        self.total_failures += 1
        if self.failures >= self.max_failures:
            self.is_open = True

    def record_success(self) -> None:
        self.failures = 0

    @property
    def state(self) -> str:
        return "open" if self.is_open else "closed"

    def __repr__(self) -> str:
        return (f"CircuitBreaker({self.state}, {self.failures}/{self.max_failures} consecutive "
                f"failures, {self.calls} calls)")
