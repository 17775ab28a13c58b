"""Reasoning in the context, and the raw token stream (Chapter 13).

    stream    parse_stream (a streamed reply's deltas assembled), first_ready_call (the first
              tool call that may start while the reply still streams), argument_problems
    history   history_for (what each history policy needs sent back), reasoning_budget
              (thinking question 2: newest reasoning within a budget, decision records for the rest)

The chapter's givens (`course.givens.reasoning_stream`, no answers) are re-exported: the tools
and their schemas, the policies, the token count of reasoning, the decision-record format, the
replayed tool loop and its probes.
"""
from __future__ import annotations

from course.givens.reasoning_stream import (ASK, FIELD, LOOP_TOOLS, PASS_BACK, POLICIES, REASONER,
                                            RECORD_PREFIX, SINCE_LAST_USER, STRIP, SYSTEM, TOOLS,
                                            decision_record, loop_history, loop_step, reason,
                                            think_tokens)
from solutions.reasoning_stream.history import history_for, reasoning_budget
from solutions.reasoning_stream.self_test import self_test
from solutions.reasoning_stream.stream import first_ready_call, parse_stream

__all__ = [
    "ASK", "FIELD", "LOOP_TOOLS", "PASS_BACK", "POLICIES", "REASONER", "RECORD_PREFIX",
    "SINCE_LAST_USER", "STRIP", "SYSTEM", "TOOLS", "decision_record", "first_ready_call",
    "history_for", "loop_history", "loop_step", "parse_stream", "reason", "reasoning_budget",
    "self_test", "think_tokens",
]
