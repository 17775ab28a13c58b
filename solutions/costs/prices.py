"""Prices in USD per million tokens, and the checks every count and price goes through.

    Prices            what a provider charges (input, cached input, output, cache writes)
    SEED_PRICES       the study guide's: DeepSeek flash at off-peak rates

No exercise of lab 05 is defined here, so the lab imports the study guide's prices from it.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MILLION = 1_000_000

# A real per-million price is never this small (the cheapest cache read we know is ~0.003),
# while a per-token price is always smaller: 0.001 USD per token would be 1,000 USD per million.
PER_TOKEN_SUSPECT = 0.001


# --------------------------------------------------------------------------- validation

def check_tokens(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return check_tokens(int(value), what)
        raise TypeError(f"{what} must be a whole number of tokens, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} cannot be negative, got {value:,}")
    return value


def _price(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a number (USD per million tokens), got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a finite price of 0 or more, got {value!r}")
    if 0 < value < PER_TOKEN_SUSPECT:
        raise ValueError(
            f"{what} = {value!r} looks like a price per token: prices here are USD per MILLION "
            f"tokens (that would be {value * MILLION:g}). Multiply by 1,000,000 or build the "
            f"prices with Prices.per_token(...).")
    return float(value)


# --------------------------------------------------------------------------- prices

@dataclass(frozen=True)
class Prices:
    """What a provider charges, in USD per million tokens."""

    input: float                       # prompt tokens not read from the cache (a miss)
    cached_input: float                # prompt tokens read from the cache (a hit)
    output: float = 0.0                # completion tokens
    cache_write: float | None = None   # prompt tokens written to the cache; None: same as input
    name: str = ""

    def __post_init__(self):
        for what in ("input", "cached_input", "output"):
            object.__setattr__(self, what, _price(getattr(self, what), what))
        write = self.input if self.cache_write is None else _price(self.cache_write, "cache_write")
        object.__setattr__(self, "cache_write", write)
        if self.cached_input > self.input:
            raise ValueError(f"cached_input ({self.cached_input:g}) is above input "
                             f"({self.input:g}): a cache hit is never dearer than a miss. Are "
                             f"the two prices swapped?")

    @classmethod
    def per_token(cls, input, cached_input, output=0.0, cache_write=None, name=""):
        """Build prices from USD-per-token figures (as some APIs and catalogues list them)."""
        def scale(v, what):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError(f"{what} must be a number (USD per token), got {v!r}")
            return v * MILLION

        return cls(scale(input, "input"), scale(cached_input, "cached_input"),
                   scale(output, "output"),
                   None if cache_write is None else scale(cache_write, "cache_write"), name)

    @property
    def has_write_premium(self) -> bool:
        return self.cache_write > self.input


# The study guide's prices: DeepSeek's flash model at off-peak rates, miss 0.15 / hit 0.003.
SEED_PRICE_FIELDS = {"input": 0.15, "cached_input": 0.003}  # plain data, as lab 05 uses it
SEED_PRICES = Prices(**SEED_PRICE_FIELDS, name="study guide: DeepSeek flash, off-peak (input only)")


PRICE_FIELDS = ("input", "cached_input", "output", "cache_write", "name")


def from_fields(cls, value, fields: Sequence[str], *, kind: str, argument: str, use: str,
                accepted: str, required: Sequence[str] = (), unit: str = ""):
    """`value` as a `cls`: itself, or a plain dict of its `fields`. Unknown fields, and missing
    `required` ones, are refused with a message saying what to use; anything else is a
    TypeError naming what is `accepted`. (`kind` names a field's owner, "price"; `argument`
    the parameter, "prices".)"""
    if isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in fields]
        if unknown:
            raise ValueError(f"unknown {kind} field(s) "
                             f"{', '.join(map(repr, unknown))}; use {use}")
        missing = [k for k in required if k not in value]
        if missing:
            raise ValueError(f"{argument} need {' and '.join(missing)}{unit}")
        return cls(**value)
    raise TypeError(f"{argument} must be {accepted}, not {type(value).__name__}")


def check_prices(prices) -> Prices:
    """`prices` as a validated Prices: a Prices, or a plain dict with the same field names."""
    return from_fields(Prices, prices, PRICE_FIELDS, kind="price", argument="prices",
                       use=f"{', '.join(PRICE_FIELDS[:4])} (USD per million tokens)",
                       accepted="a Prices object or a dict of USD-per-million prices",
                       required=("input", "cached_input"), unit=" (USD per million tokens)")
