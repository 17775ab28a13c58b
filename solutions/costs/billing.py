"""Billing: the cost of a request and of a whole run from its token counts.

Every count goes through the same checks (whole, non-negative, cached part of the prompt) and a
message names the step at fault. `price_run` is lab 05's first exercise.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from solutions.costs.prices import MILLION, Prices, check_prices, check_tokens


class Request(NamedTuple):
    """One billed call: its tokens, and the agent step it belongs to. A Request read from an
    API's usage (solutions.costs.usage) has None where the provider did not report a figure;
    pricing one needs the figure filled in by a stated rule first (usage.bill_usages does)."""

    step: int
    prompt_tokens: int
    cached_tokens: int | None = 0
    completion_tokens: int | None = 0
    cache_write_tokens: int | None = 0
    kind: str = "agent"  # "agent", or "summary" for a compaction's summarising call


def _check_request(i: int, prompt, cached, completion, written) -> tuple[int, int, int, int]:
    """The four counts of step i+1 as ints, or a clear error saying what is impossible."""
    where = f"step {i + 1}"
    prompt = check_tokens(prompt, f"{where}: prompt tokens")
    cached = check_tokens(cached, f"{where}: cached tokens")
    completion = check_tokens(completion, f"{where}: completion tokens")
    written = check_tokens(written, f"{where}: cache-write tokens")
    if cached > prompt:
        raise ValueError(f"{where}: {cached:,} cached tokens but the prompt has only {prompt:,}. "
                         f"Cached tokens are part of the prompt and can never exceed it.")
    if written > prompt - cached:
        raise ValueError(f"{where}: {written:,} cache-write tokens but only {prompt - cached:,} "
                         f"prompt tokens were not read from the cache.")
    return prompt, cached, completion, written


def _cost(prompt: int, cached: int, completion: int, written: int, prices: Prices) -> float:
    missed = prompt - cached - written
    return (cached * prices.cached_input + written * prices.cache_write + missed * prices.input
            + completion * prices.output) / MILLION


def request_cost(prompt_tokens: int, cached_tokens: int, prices: Prices, completion_tokens: int = 0,
                 cache_write_tokens: int = 0) -> float:
    """USD for one request: hits, writes and plain misses of the prompt, plus the reply."""
    prices = check_prices(prices)
    return _cost(*_check_request(0, prompt_tokens, cached_tokens, completion_tokens,
                                 cache_write_tokens), prices)


def _per_step(values, n: int | None, what: str) -> Sequence:
    """`values` as a per-step list (None: zeros); n=None accepts any length."""
    if values is None and n is not None:
        return [0] * n
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence):
        raise TypeError(f"{what} must be a list with one count per step, "
                        f"not {type(values).__name__}")
    if n is not None and len(values) != n:
        raise ValueError(f"{what} has {len(values)} entries but there are {n} steps")
    return values


def step_costs(prompt_tokens, cached_tokens, prices: Prices, completion_tokens=None,
               cache_write_tokens=None) -> list[float]:
    """USD per step of a run given per-step counts (see `price_run`)."""
    prices = check_prices(prices)
    prompt = _per_step(prompt_tokens, None, "prompt_tokens")
    n = len(prompt)
    cached = _per_step(cached_tokens, n, "cached_tokens")
    completion = _per_step(completion_tokens, n, "completion_tokens")
    written = _per_step(cache_write_tokens, n, "cache_write_tokens")
    return [_cost(*_check_request(i, prompt[i], cached[i], completion[i], written[i]), prices)
            for i in range(n)]


def price_run(prompt_tokens, cached_tokens, prices: Prices, completion_tokens=None,
              cache_write_tokens=None) -> float:
    """USD for a whole run from per-step token counts and cached-prefix sizes.

    prompt_tokens[i] is what step i+1 sends; cached_tokens[i] how much of it was read from the
    cache. Optional completion_tokens and cache_write_tokens (default 0 each step) price the
    replies and cache writes. `prices` is a Prices or a dict such as
    {"input": 0.15, "cached_input": 0.003}, in USD per million tokens. Raises ValueError for
    impossible counts (cached above the prompt, negative numbers) naming the step, and for
    prices that look like per-token figures.
    """
    return math.fsum(step_costs(prompt_tokens, cached_tokens, prices, completion_tokens,
                                cache_write_tokens))


def _request_usd(r: Request, prices: Prices) -> float:
    return _cost(*_check_request(r.step - 1, r.prompt_tokens, r.cached_tokens,
                                 r.completion_tokens, r.cache_write_tokens), prices)


def price_requests(requests: Sequence[Request], prices: Prices) -> float:
    prices = check_prices(prices)
    return math.fsum(_request_usd(r, prices) for r in requests)


def cumulative_cost_by_step(requests: Sequence[Request], prices: Prices, steps: int) -> list[float]:
    """Running total of USD after each step 1..steps (summary calls count at their step)."""
    prices = check_prices(prices)
    per_step = [0.0] * steps
    for r in requests:
        if not 1 <= r.step <= steps:
            raise ValueError(f"request for step {r.step} is outside steps 1..{steps}")
        per_step[r.step - 1] += _request_usd(r, prices)
    total, running = 0.0, []
    for cost in per_step:
        total += cost
        running.append(total)
    return running
