"""Compaction in production (Chapter 11): five layers, cheapest first, each toggled.

    budget      budget_tool_results, preview (layer 1: large outputs to files, frozen)
    noise       drop_noise (layer 2: delete, don't summarise)
    micro       micro_compact (layer 3: clear old tool results near the limit)
    archive     archive_turn, archive_message (layer 4: one record per turn, a log)
    full        compact_with_breaker (layer 5: a model summary behind the breaker)
    compactor   LayeredCompactor, Settings, TokenMeter, LAYERS, ContextOverflow

The chapter's givens (`course.givens.production_compaction`, no answers) are re-exported where
its lesson and tests use them: the state the layers keep (ResultStore, CircuitBreaker),
NOISE_RULES, RESULTS_DIR, is_preview.

Pairing is never broken: layers 1-3 change only the contents of tool results, layers 4 and 5
remove whole turns (Chapter 04's `check_pairing` checks it).
"""
from __future__ import annotations

from course.givens.production_compaction import (NOISE_RULES, RESULTS_DIR, CircuitBreaker,
                                                 ResultStore, is_preview)
from solutions.production_compaction.archive import TRANSCRIPT_PATH, archive_turn
from solutions.production_compaction.budget import budget_tool_results
from solutions.production_compaction.compactor import (LAYERS, ContextOverflow, Event,
                                                       LayeredCompactor, Settings, TokenMeter)
from solutions.production_compaction.full import compact_with_breaker
from solutions.production_compaction.micro import CLEARED_MARK, micro_compact
from solutions.production_compaction.noise import drop_noise
from solutions.production_compaction.self_test import self_test

__all__ = [
    "CLEARED_MARK", "CircuitBreaker", "ContextOverflow", "Event", "LAYERS", "LayeredCompactor",
    "NOISE_RULES", "RESULTS_DIR", "ResultStore", "Settings", "TRANSCRIPT_PATH", "TokenMeter",
    "archive_turn", "budget_tool_results", "compact_with_breaker", "drop_noise", "is_preview",
    "micro_compact", "self_test",
]
