"""Recorded usage: what an API reported per request (OpenAI's, DeepSeek's or a flat record's
shape) as `Request`s, and the bill they add up to."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from solutions.costs.billing import Request, price_run
from solutions.costs.prices import Prices


def _field(obj, name):
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def usage_request(usage, step: int = 1) -> Request:
    """A `Request` from an API usage object or dict.

    Reads OpenAI's shape (prompt_tokens, completion_tokens, prompt_tokens_details.cached_tokens,
    which the teaching model also reports), DeepSeek's (prompt_cache_hit_tokens) and flat
    records with a `cached_tokens` field. Cache writes are taken from
    prompt_tokens_details.cache_write_tokens when a provider reports them.
    """
    prompt = _field(usage, "prompt_tokens")
    if prompt is None:
        raise ValueError(f"usage of step {step} has no prompt_tokens: {usage!r}")
    details = _field(usage, "prompt_tokens_details")
    cached = _field(details, "cached_tokens")
    if cached is None:
        cached = _field(usage, "prompt_cache_hit_tokens")
    if cached is None:  # a flat record, such as lesson_support.cache_experiment.RequestRecord
        cached = _field(usage, "cached_tokens")
    written = _field(details, "cache_write_tokens")
    return Request(step, prompt, cached or 0, _field(usage, "completion_tokens") or 0,
                   written or 0)


def price_usages(usages: Sequence, prices: Prices) -> float:
    """USD for a run priced from the `usage` records the API returned, one per request."""
    requests = [usage_request(u, step) for step, u in enumerate(usages, start=1)]
    return price_run([r.prompt_tokens for r in requests], [r.cached_tokens for r in requests],
                     prices, [r.completion_tokens for r in requests],
                     [r.cache_write_tokens for r in requests])
