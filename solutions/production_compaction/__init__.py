"""Compaction in production (Chapter 11): five layers, cheapest first, each toggled.

    budget      ResultStore, budget_tool_results (layer 1: large outputs to files, frozen)
    noise       NOISE_RULES, drop_noise (layer 2: delete, don't summarise)
    micro       micro_compact (layer 3: clear old tool results near the limit)
    archive     archive_turn, archive_message (layer 4: one record per turn, a log)
    breaker     CircuitBreaker
    full        compact_with_breaker (layer 5: a model summary behind the breaker)
    compactor   LayeredCompactor, Settings, TokenMeter, LAYERS, ContextOverflow

Pairing is never broken: layers 1-3 change only the contents of tool results, layers 4 and 5
remove whole turns (Chapter 04's `check_pairing` checks it).
"""
from __future__ import annotations

from solutions.production_compaction.archive import (ARCHIVE_HEADER, TRANSCRIPT_PATH,
                                                     archive_message, archive_turn, is_archive)
from solutions.production_compaction.breaker import CircuitBreaker
from solutions.production_compaction.budget import (PREVIEW_MARK, RESULTS_DIR, ResultStore,
                                                    budget_tool_results, is_preview, preview)
from solutions.production_compaction.compactor import (LAYERS, PARTS, ContextOverflow, Event,
                                                       LayeredCompactor, Settings, TokenMeter)
from solutions.production_compaction.full import KEEP_TURNS, compact_with_breaker
from solutions.production_compaction.micro import CLEARED_MARK, micro_compact
from solutions.production_compaction.noise import NOISE_MARK, NOISE_RULES, drop_noise
from solutions.production_compaction.self_test import self_test

__all__ = [
    "ARCHIVE_HEADER", "CLEARED_MARK", "KEEP_TURNS", "LAYERS", "NOISE_MARK", "NOISE_RULES",
    "PARTS", "PREVIEW_MARK", "RESULTS_DIR", "TRANSCRIPT_PATH", "CircuitBreaker", "ContextOverflow",
    "Event",
    "LayeredCompactor", "ResultStore", "Settings", "TokenMeter", "archive_message",
    "archive_turn", "budget_tool_results", "compact_with_breaker", "drop_noise", "is_archive",
    "is_preview", "micro_compact", "preview", "self_test",
]
