"""Select: score each candidate (relevance, recency, priority) and fill the budget greedily."""
from __future__ import annotations

import functools
import gc
import heapq
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import AbstractSet, Iterable, Sequence

from course.givens.gssc.config import ContextConfig
from course.givens.gssc.matching import overlap, query_terms
from course.givens.gssc.packets import Packet, as_datetime


def recency(timestamp: datetime, now: datetime, half_life_hours: float = 24.0) -> float:
    """1.0 for something written now, 0.5 one half-life ago, 0.25 two half-lives ago...
    Anything dated after `now` counts as new (1.0)."""
    age = (as_datetime(now) - as_datetime(timestamp)).total_seconds()
    return _decay(age, half_life_hours)


def _decay(age_seconds: float, half_life_hours: float) -> float:
    return 0.5 ** ((age_seconds if age_seconds > 0.0 else 0.0) / 3600 / half_life_hours)


def default_now(packets: Iterable[Packet]) -> datetime:
    """The newest packet's time: scores then depend on the inputs only, never on the clock."""
    return max((p.timestamp for p in packets), default=datetime(1970, 1, 1, tzinfo=timezone.utc))


def packet_relevance(packet: Packet, query: str) -> float:
    """The packet's given relevance if it has one, else `relevance(query, packet.content)`."""
    return _relevance(packet, query_terms(query))


def _relevance(packet: Packet, wanted: frozenset) -> float:
    return packet.relevance if packet.relevance is not None else overlap(wanted, packet.terms)


def _value(packet: Packet, rel: float, rec: float, config: ContextConfig) -> float:
    return packet.priority * (config.relevance_weight * rel + config.recency_weight * rec)


def score(packet: Packet, query: str, config: ContextConfig, now: datetime) -> float:
    """priority * (relevance_weight * relevance + recency_weight * recency)."""
    rec = recency(packet.timestamp, now, config.half_life_hours)
    return _value(packet, packet_relevance(packet, query), rec, config)


@dataclass(slots=True)
class Row:
    """One candidate and what became of it (the widget's table, the lesson's explanations)."""

    packet: Packet
    relevance: float | None  # None for pinned packets: they are not scored
    recency: float | None
    score: float | None
    status: str  # "pinned", "selected", "did not fit", "below min relevance", "redundant", "cut"
    rank: int | None = None  # order of choice among the selected (0 = chosen first)

    @property
    def tokens(self) -> int:
        return self.packet.tokens


def _rank_key(p: Packet):
    # Highest score first (sorted on before this); ties: cheaper first, then newer, then by
    # text (input order never matters).
    return (p.tokens, -p.epoch, p.source, p.content)


def _ranked(packets: Sequence[Packet], scores: list[float], eligible: list[int]) -> list[int]:
    """The eligible indices, best first: by score, ties by `_rank_key`. Sorted on the score
    alone first: a float key makes no tuple per packet (at 100k packets those tuples were much
    of what the garbage collector had to chase); only runs of indices that tie on the score
    are then ordered by the whole key."""
    order = sorted(eligible, key=scores.__getitem__, reverse=True)  # stable: ties keep their order
    start = 0
    for end in range(1, len(order) + 1):
        if end == len(order) or scores[order[end]] != scores[order[start]]:
            if end - start > 1:
                order[start:end] = sorted(order[start:end], key=lambda i: _rank_key(packets[i]))
            start = end
    return order


def _jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared) if a or b else 0.0


def _collector_paused(build):
    """Run `build` with the garbage collector paused. A build makes one Row and a few floats
    per packet and no reference cycles, yet those allocations trigger collections that walk
    every live packet: at 100,000 packets about a fifth of a build (benchmarks/bench_gssc.py).
    Nothing a build makes needs the collector, and it is restored as it was, even on error."""
    @functools.wraps(build)
    def paused(*args, **kwargs):
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return build(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()
    return paused


@_collector_paused
def explain_selection(packets: Sequence[Packet], query: str, budget: int,
                      config: ContextConfig | None = None, now: datetime | None = None) -> list[Row]:
    """Score every packet and fill `budget` tokens greedily; return one Row per packet.

    The fill walks the candidates from the best score down and takes each one that still fits.
    A packet that does not fit is skipped, and the walk goes on: a smaller packet further down
    may still fit (stopping at the first misfit would leave the budget half empty).
    """
    config = config or ContextConfig()
    if not isinstance(budget, int) or budget < 0:
        raise ValueError(f"budget must be a whole number of tokens >= 0, got {budget!r}")
    packets = list(packets)
    now = (as_datetime(now) if now is not None else default_now(packets)).timestamp()
    # Scores go in flat lists of floats, and each Row is made once, finished: at 100k
    # packets, per-packet temporaries and attribute look-ups are most of a build.
    wanted, half_life = query_terms(query), config.half_life_hours
    rel_weight, rec_weight = config.relevance_weight, config.recency_weight
    rels, recs, scores = [], [], []
    for p in packets:
        rel = p.relevance
        if rel is None:
            rel = overlap(wanted, p._term_keys.keys())  # p.terms, without the property call
        rec = _decay(now - p.epoch, half_life)
        rels.append(rel)
        recs.append(rec)
        scores.append(p.priority * (rel_weight * rel + rec_weight * rec))  # = _value(...)

    statuses = ["below min relevance"] * len(packets)
    ranks: list[int | None] = [None] * len(packets)
    floor = config.min_relevance
    order = _ranked(packets, scores, [i for i, rel in enumerate(rels) if rel >= floor])
    if config.diversity > 0:
        _fill_diverse(packets, scores, order, budget, config.diversity, statuses, ranks)
    else:
        for i in order:
            statuses[i] = "did not fit"
        for rank, i in enumerate(_fill(order, [packets[i].tokens for i in order], budget)):
            statuses[i], ranks[i] = "selected", rank
    return list(map(Row, packets, rels, recs, scores, statuses, ranks))


def _fill(items: Sequence, tokens: Sequence[int], budget: int) -> list:
    """The items, in the order given, that fit in `budget` when each is taken if it still fits
    (`tokens[k]` is the cost of `items[k]`)."""
    chosen, used = [], 0
    for item, cost in zip(items, tokens):
        if used + cost <= budget:
            chosen.append(item)
            used += cost
    return chosen


def greedy_fill(ranked: Sequence[Packet], budget: int) -> list[Packet]:
    """Walk the packets in the order given (best first) and take each one that still fits in
    `budget` tokens. A packet that does not fit is skipped and the walk goes on: a smaller one
    further down may still fit. (Works for anything with a `tokens` attribute.)"""
    return _fill(ranked, [p.tokens for p in ranked], budget)


def _fill_diverse(packets: Sequence[Packet], scores: list[float], ranked: list[int], budget: int,
                  diversity: float, statuses: list[str], ranks: list) -> None:
    """The fill with a penalty for repeating what is already chosen: sets `statuses[i]` and
    `ranks[i]` for each index in `ranked` (best first).

    Lazy greedy: a candidate's penalty can only grow as more is chosen, so a stale score is an
    upper bound; recompute it when it reaches the top, and take it if it still beats the rest.
    """
    heap = [(-scores[i], order, i) for order, i in enumerate(ranked)]
    heapq.heapify(heap)
    chosen_terms, used = [], 0
    while heap:
        _, order, i = heapq.heappop(heap)
        packet = packets[i]
        if used + packet.tokens > budget:
            statuses[i] = "did not fit"
            continue
        similarity = max((_jaccard(packet.terms, t) for t in chosen_terms), default=0.0)
        adjusted = scores[i] - diversity * similarity
        if heap and adjusted < -heap[0][0]:
            heapq.heappush(heap, (-adjusted, order, i))
            continue
        if similarity > 0 and adjusted <= 0:
            statuses[i] = "redundant"
            continue
        statuses[i], ranks[i] = "selected", len(chosen_terms)
        chosen_terms.append(packet.terms)
        used += packet.tokens


def select(packets: Sequence[Packet], query: str, budget: int,
           config: ContextConfig | None = None, now: datetime | None = None) -> list[Packet]:
    """The packets worth sending, best first, together at most `budget` tokens.

    Score each packet (see `score`), drop those below `config.min_relevance`, then walk the
    rest from the best score down taking every packet that still fits. `now` defaults to the
    newest packet's time.
    """
    rows = explain_selection(packets, query, budget, config, now)
    chosen = sorted((r for r in rows if r.status == "selected"), key=lambda r: r.rank)
    return [r.packet for r in chosen]
