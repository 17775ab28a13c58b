"""An architecture for long runs (Chapter 15): reports, sub-agents, cache keys, the sandbox.

    report          digest (a child's report contract: bounded, with pointers)
    children        run_children (fresh sub-agents in parallel, budgets, failures reported)
    variants        cache_variants, move_after_boundary (the prefixes a prompt scheme makes)
    sandbox_filter  filter_in_sandbox (only the filtered lines enter the context)

The chapter's givens (`course.givens.architecture`, no answers) are re-exported: the children's
tasks and their tools' results, the prompt fragments and the boundary, the big log, the counter.
"""
from __future__ import annotations

from course.givens.architecture import (BOUNDARY, CHILD_TASKS, PROMPT_FRAGMENTS, big_log,
                                        count_tokens, render_prompt, search_world)
from solutions.architecture.children import run_children
from solutions.architecture.report import digest
from solutions.architecture.sandbox_filter import filter_in_sandbox
from solutions.architecture.self_test import self_test
from solutions.architecture.variants import cache_variants, move_after_boundary

__all__ = [
    "BOUNDARY", "CHILD_TASKS", "PROMPT_FRAGMENTS", "big_log", "cache_variants", "count_tokens",
    "digest", "filter_in_sandbox", "move_after_boundary", "render_prompt", "run_children",
    "search_world", "self_test",
]
