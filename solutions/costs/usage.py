"""Recorded usage: what an API reported per request, as `Request`s, and the bill they add up to.

Every usage is read by `course.usage.read_usage`, so OpenAI's shape (the teaching model's too),
DeepSeek's, Anthropic's fields, a plain Ollama/vLLM usage and the course's flat records are all
understood. A figure the provider did not report stays None in the `Request`; it is never
read as 0.

Pricing has to put *some* number on a missing figure, and does so explicitly:

    not reported        priced as                                        warned?
    cached_tokens       no cache read: the whole prompt at the input    yes (UsageNotReported):
                        price (an upper bound when the provider caches)  the bill may be too high
    cache_write_tokens  no cache-write premium (OpenAI and DeepSeek      no: providers that bill
                        have none; Anthropic reports its writes)          writes report them
    completion_tokens   not priced                                       yes: the bill is too low

`bill_usages` returns a `UsageBill`: the USD, the requests and, per figure, the steps whose
usage did not report it (`bill.not_reported`). `price_usages` returns only the USD (what lessons
print) and emits a `UsageNotReported` warning when a missing figure changed the price.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from course.usage import NOT_REPORTED, read_usage
from solutions.costs.billing import Request, price_requests
from solutions.costs.prices import Prices

# Figures whose absence changes the bill enough to warn about (see the module's table).
WARNED = ("cached_tokens", "completion_tokens")
PRICED_AS = {"cached_tokens": "priced as uncached (the whole prompt at the input price)",
             "cache_write_tokens": "priced with no cache-write premium",
             "completion_tokens": "not priced"}


class UsageNotReported(UserWarning):
    """A usage figure the bill needs was not reported by the provider and was priced by a rule."""


def usage_request(usage, step: int = 1) -> Request:
    """A `Request` from an API usage (SDK object, dict or flat record), read by `read_usage`.

    cached_tokens, cache_write_tokens and completion_tokens are None where the provider does not
    report them. Raises ValueError when there is no prompt_tokens at all: nothing can be billed.
    """
    read = read_usage(usage)
    if read.prompt is None:
        raise ValueError(f"usage of step {step} has no prompt_tokens: {usage!r}")
    return Request(step, read.prompt, read.cached, read.completion, read.cache_write)


def not_reported(requests: Sequence[Request]) -> dict[str, tuple[int, ...]]:
    """{figure: steps whose usage did not report it}, only for figures missing somewhere."""
    missing = {}
    for figure in ("cached_tokens", "cache_write_tokens", "completion_tokens"):
        steps = tuple(r.step for r in requests if getattr(r, figure) is None)
        if steps:
            missing[figure] = steps
    return missing


@dataclass(frozen=True)
class UsageBill:
    """A run priced from its usage records, and which figures the provider did not report."""

    usd: float
    requests: tuple[Request, ...]
    not_reported: dict[str, tuple[int, ...]]

    @property
    def complete(self) -> bool:
        """True when every figure the price depends on was reported."""
        return not any(figure in self.not_reported for figure in WARNED)

    def notes(self, figures: Sequence[str] = tuple(PRICED_AS)) -> list[str]:
        """One sentence per figure in `figures` that was not reported, saying how it was priced."""
        n = len(self.requests)
        return [f"{figure} {NOT_REPORTED} in {len(steps)} of {n} requests: {PRICED_AS[figure]}"
                for figure, steps in self.not_reported.items() if figure in figures]

    def __str__(self) -> str:
        return "; ".join([f"${self.usd:.4f}", *self.notes()])


def _priced(r: Request) -> Request:
    """`r` with each not-reported figure replaced by the rule it is priced under (see above)."""
    return r._replace(cached_tokens=r.cached_tokens or 0,
                      cache_write_tokens=r.cache_write_tokens or 0,
                      completion_tokens=r.completion_tokens or 0)


def bill_usages(usages: Sequence, prices: Prices) -> UsageBill:
    """The bill of a run from the `usage` records the API returned, one per request."""
    requests = tuple(usage_request(u, step) for step, u in enumerate(usages, start=1))
    usd = price_requests([_priced(r) for r in requests], prices)
    return UsageBill(usd, requests, not_reported(requests))


def price_usages(usages: Sequence, prices: Prices) -> float:
    """USD for a run priced from the `usage` records the API returned, one per request.

    Warns (UsageNotReported) when cached or completion tokens were not reported; use
    `bill_usages` to get which steps and figures were missing.
    """
    bill = bill_usages(usages, prices)
    if not bill.complete:
        warnings.warn("usage priced by rule, not by the provider's figures: "
                      + "; ".join(bill.notes(WARNED)), UsageNotReported, stacklevel=2)
    return bill.usd
