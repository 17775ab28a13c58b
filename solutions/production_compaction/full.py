"""Layer 5, full compaction by a model, the last resort, behind a circuit breaker.

It reuses Chapter 04's `compact` (head + one summary + the last turns, whole turns only, so
pairing holds) with any summariser, e.g. Chapter 04's `ModelSummarizer` on the teaching model.
The breaker (`CircuitBreaker`) and `KEEP_TURNS` are the chapter's givens.
"""
from __future__ import annotations

from typing import Callable

from course.givens.production_compaction import KEEP_TURNS, CircuitBreaker
from solutions.compaction import compact

__all__ = ["KEEP_TURNS", "compact_with_breaker"]


def compact_with_breaker(messages: list[dict], summarize: Callable[[list[dict]], str],
                         breaker: CircuitBreaker, keep_turns: int = KEEP_TURNS) -> list[dict]:
    """Compact `messages` with `summarize` unless `breaker` is open. A summariser that raises
    counts as a failure and leaves the messages as they were; a success resets the count. When
    the breaker is open, the summariser is not called at all and the messages come back as they
    are (the caller falls back to something cheaper)."""
    if not breaker.allow():
        return list(messages)
    breaker.calls += 1
    try:
        result = compact(messages, keep_turns=keep_turns, summarize=summarize)
    except Exception:  # noqa: BLE001 - any failure of the summariser counts
        breaker.record_failure()
        return list(messages)
    breaker.record_success()
    return result
