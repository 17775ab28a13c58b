"""Explicit prompt caching, as Anthropic bills it: breakpoints, a minimum length and a TTL.

The rest of this package models *automatic* caching (OpenAI, DeepSeek, the teaching model) with
`CacheRules`: the provider caches every prompt on its own, and under it every token not read
from the cache is written to it. Anthropic caches only where a request marks a `cache_control`
breakpoint (up to four per request), only prefixes of a minimum length, and keeps an entry for
a fixed time after its last use. `Breakpoints` is a simple model of that, with these rules:

- **Where the breakpoints are.** `at` names places in every request: "prefix", the end of the
  fixed prefix (tools and system prompt), and "end", the end of the request (the breakpoint an
  agent moves to its latest message on every call). This model uses at most two of the four.
- **What a read covers.** The longest entry an earlier call wrote that is still alive and still
  a prefix of this request. Reading it refreshes it (and, a simplification, every shorter entry
  on the same history).
- **What a write covers.** Every breakpoint past the end of the read whose prefix is at least
  `minimum` tokens long gets an entry. The tokens from the end of the read to the furthest such
  breakpoint are billed once, at the write price; tokens after the last breakpoint are plain
  input. A request shorter than `minimum` at every breakpoint writes nothing.
- **What expires.** An entry unused for longer than its TTL: "5m" (300 s) or "1h" (3,600 s).
  Agent steps are `seconds_between_steps` apart; a compaction's summarising call is made at its
  step's time, just before the agent's call.
- **Prices.** A read costs `cached_input` (a tenth of input at Anthropic). A 5-minute write
  costs the price list's `cache_write` (1.25x input); a 1-hour write costs twice the input price
  (`write_prices`).

Left out: the lookback (a breakpoint finds an earlier entry only within about 20 content blocks
before it: a step that adds more blocks needs a breakpoint of its own), the minimum of each
model (1,024 tokens on most, 2,048 or 4,096 on some: set `minimum`), mixed TTLs in one request.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from solutions.costs.billing import Request
from solutions.costs.prices import Prices, check_prices, check_tokens
from solutions.costs.run import Call

BREAKPOINT_PLACES = ("prefix", "end")  # where this model can put a cache_control breakpoint
TTL_SECONDS = {"5m": 300, "1h": 3600}  # the two lifetimes Anthropic offers
ONE_HOUR_WRITE_FACTOR = 2.0            # a 1-hour write costs twice the input price


@dataclass(frozen=True)
class Breakpoints:
    """Explicit caching: breakpoints `at` named places, a `minimum` prefix, a `ttl`."""

    at: tuple[str, ...] = ("prefix", "end")
    minimum: int = 1024
    ttl: str = "5m"
    seconds_between_steps: float = 30.0

    def __post_init__(self):
        at = (self.at,) if isinstance(self.at, str) else tuple(self.at)
        unknown = [p for p in at if p not in BREAKPOINT_PLACES]
        if unknown or len(set(at)) != len(at):
            raise ValueError(f"breakpoints go at distinct places among "
                             f"{', '.join(BREAKPOINT_PLACES)}; got {at!r}")
        object.__setattr__(self, "at", at)
        check_tokens(self.minimum, "minimum")
        if self.ttl not in TTL_SECONDS:
            raise ValueError(f"ttl must be one of {', '.join(TTL_SECONDS)}, not {self.ttl!r}")
        seconds = self.seconds_between_steps
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
            raise ValueError(f"seconds_between_steps must be a number of 0 or more, "
                             f"not {seconds!r}")

    def write_prices(self, prices) -> Prices:
        """`prices` with the write price of this TTL (5m: the list's own; 1h: 2x input)."""
        prices = check_prices(prices)
        if self.ttl == "5m":
            return prices
        return dataclasses.replace(prices, cache_write=ONE_HOUR_WRITE_FACTOR * prices.input)

    def marks(self, prompt: int, prefix_tokens: int) -> list[int]:
        """The positions (tokens from the start) of this request's breakpoints, ascending."""
        places = {"prefix": min(prefix_tokens, prompt), "end": prompt}
        return sorted({places[p] for p in self.at})

    def bill(self, calls: Sequence[Call], prefix_tokens: int) -> list[Request]:
        """The billed requests of `calls` (in the order they are made) under these rules."""
        ttl = TTL_SECONDS[self.ttl]
        entries: list[int] = []  # written positions, ascending; all last used at `last_used`
        last_used = 0.0
        requests = []
        for call in calls:
            now = (call.step - 1) * self.seconds_between_steps
            while entries and entries[-1] > call.shared:  # no longer a prefix of this request
                entries.pop()
            if entries and now - last_used > ttl:         # unused for longer than the TTL
                entries.clear()
            read = entries[-1] if entries else 0
            new = [m for m in self.marks(call.prompt, prefix_tokens)
                   if m > read and m >= self.minimum]
            written = new[-1] - read if new else 0
            entries.extend(new)
            last_used = now
            requests.append(Request(call.step, call.prompt, read, call.completion, written,
                                    call.kind))
        return requests


ANTHROPIC_RULES = Breakpoints()  # the prefix and the latest message marked, 5-minute TTL
