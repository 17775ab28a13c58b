"""Prompt caching, measured (Chapter 05): what keeps the cache warm and what breaks it.

Lesson support, not an answer: the experiment lesson 05 runs (lab 05 asks for pricing, which
lives in solutions.costs).

A provider reuses its work for the longest prefix a new request shares, token for token, with
an earlier one, and reports it in the usage record (OpenAI's
`prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`; Ollama not at all),
which this package reads only through `course.usage.read_usage`. An agent run is
ideal for this: request N is request N-1 plus one more step, as long as nothing earlier in the
request changes. This module replays one scripted agent run (the same steps for everybody, so
the runs are comparable) under several ways of building the requests, sends every request to
a real OpenAI-compatible endpoint, and reads back what was cached.

Each run's system prompt starts with its own session line, so runs measured one after another
on the same server do not warm each other's cache. The tool definitions come before the system
prompt in the teaching model's template; they are kept well under the 1,024-token minimum so
that they alone can never be reported as a cache hit. For numbers from a clean slate use a
private server: `with course.llm.serve() as server: client = server.client()`.

The package, one concern per module (this module re-exports what is used through it):

    script    the scripted run: system prompt, tools, task, scripted_steps
    building  STRATEGIES and build_request: the requests of a run under each strategy
    measure   run_strategy, measure_strategies, expected_cached_tokens, the hit-rate table
              and chart
"""
from __future__ import annotations

from lesson_support.cache_experiment.building import (COMPACT_THRESHOLD_TOKENS, STRATEGIES,
                                                      build_request)
from lesson_support.cache_experiment.measure import (RequestRecord, expected_cached_tokens,
                                                     format_hit_rate_table, hit_rate_table,
                                                     measure_strategies, plot_hit_rates,
                                                     run_strategy)
from lesson_support.cache_experiment.script import SYSTEM_PROMPT, TASK, TOOLS, scripted_steps

__all__ = [
    "COMPACT_THRESHOLD_TOKENS", "RequestRecord", "STRATEGIES", "SYSTEM_PROMPT", "TASK", "TOOLS",
    "build_request", "expected_cached_tokens", "format_hit_rate_table", "hit_rate_table",
    "measure_strategies", "plot_hit_rates", "run_strategy", "scripted_steps",
]
