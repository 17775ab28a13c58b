"""Select: score each candidate (relevance, recency, priority) and fill the budget greedily."""
from __future__ import annotations

import functools
import gc
import heapq
import operator
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


_timestamp = operator.attrgetter("timestamp")


def default_now(packets: Iterable[Packet]) -> datetime:
    """The newest packet's time: scores then depend on the inputs only, never on the clock."""
    return max(map(_timestamp, packets), default=datetime(1970, 1, 1, tzinfo=timezone.utc))


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
    # text (input order never matters). Only packets that tie on score need it.
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


def explain_selection(packets: Sequence[Packet], query: str, budget: int,
                      config: ContextConfig | None = None, now: datetime | None = None) -> list[Row]:
    """Score every packet and fill `budget` tokens greedily; return one Row per packet.

    The fill walks the candidates from the best score down and takes each one that still fits.
    A packet that does not fit is skipped, and the walk goes on: a smaller packet further down
    may still fit (stopping at the first misfit would leave the budget half empty).
    """
    return choose(packets, query, budget, config, now)[0]


@_collector_paused
def choose(packets: Sequence[Packet], query: str, budget: int, config: ContextConfig | None,
            now: datetime | None) -> tuple[list[Row], list[Packet]]:
    """explain_selection's rows, and the selected packets in the order they were chosen (what
    build_context needs, without walking every row again)."""
    config = config or ContextConfig()
    if not isinstance(budget, int) or budget < 0:
        raise ValueError(f"budget must be a whole number of tokens >= 0, got {budget!r}")
    packets = list(packets)
    now = (as_datetime(now) if now is not None else default_now(packets)).timestamp()
    # One pass over the packets, each Row made while its packet is at hand (at 100k packets a
    # packet's memory is out of the CPU's caches by the next pass); scores and token counts go
    # in flat lists for the fill.
    wanted, half_life, floor = query_terms(query), config.half_life_hours, config.min_relevance
    rel_weight, rec_weight = config.relevance_weight, config.recency_weight
    rows, scores, tokens, eligible = [], [], [], []
    for i, p in enumerate(packets):
        rel = p.relevance
        if rel is None:
            rel = overlap(wanted, p._term_keys.keys())  # p.terms, without the property call
        rec = _decay(now - p.epoch, half_life)
        score = p.priority * (rel_weight * rel + rec_weight * rec)  # = _value(...)
        if rel >= floor:
            eligible.append(i)
            rows.append(Row(p, rel, rec, score, "did not fit"))
        else:
            rows.append(Row(p, rel, rec, score, "below min relevance"))
        scores.append(score)
        tokens.append(p.tokens)
    if config.diversity > 0:
        chosen = _fill_diverse(packets, scores, _ranked(packets, scores, eligible), budget,
                               config.diversity, rows)
    else:
        chosen = _fill_best_first(packets, scores, tokens, eligible, budget)
    for rank, i in enumerate(chosen):
        rows[i].status, rows[i].rank = "selected", rank
    return rows, [packets[i] for i in chosen]


_FIRST_HEAD = 64  # the fill ranks the best 64 candidates first, then 4 times as many...


def _fill_best_first(packets: Sequence[Packet], scores: list[float], tokens: list[int],
                     eligible: list[int], budget: int) -> list[int]:
    """The indices `_fill` takes from the eligible ones in `_ranked` order (best first), found
    without ranking them all: rank only the best _FIRST_HEAD (every candidate scoring at least
    the _FIRST_HEAD-th best score, so ties are whole) and walk them; then, of the rest, keep only
    those that still fit in what is left (the room only shrinks, so the others can never be
    taken) and go on with the next, larger head. A fill of a few dozen packets from 100,000
    ranks a few hundred instead of sorting them all and breaking every tie."""
    chosen, used, rest, size = [], 0, eligible, _FIRST_HEAD
    while rest:
        cut = heapq.nlargest(size, map(scores.__getitem__, rest))[-1] if len(rest) > size else None
        head = rest if cut is None else [i for i in rest if scores[i] >= cut]
        for i in _ranked(packets, scores, head):
            if used + tokens[i] <= budget:
                chosen.append(i)
                used += tokens[i]
        if cut is None:
            break
        room = budget - used
        rest = [i for i in rest if scores[i] < cut and tokens[i] <= room]
        size *= 4
    return chosen


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
                  diversity: float, rows: list[Row]) -> list[int]:
    """The fill with a penalty for repeating what is already chosen: the indices chosen from
    `ranked` (best first), in the order chosen; the rows of those left out as redundant say so.

    Lazy greedy: a candidate's penalty can only grow as more is chosen, so a stale score is an
    upper bound; recompute it when it reaches the top, and take it if it still beats the rest.
    """
    heap = [(-scores[i], order, i) for order, i in enumerate(ranked)]
    heapq.heapify(heap)
    chosen, chosen_terms, used = [], [], 0
    while heap:
        _, order, i = heapq.heappop(heap)
        packet = packets[i]
        if used + packet.tokens > budget:
            continue  # its row says "did not fit" already
        similarity = max((_jaccard(packet.terms, t) for t in chosen_terms), default=0.0)
        adjusted = scores[i] - diversity * similarity
        if heap and adjusted < -heap[0][0]:
            heapq.heappush(heap, (-adjusted, order, i))
            continue
        if similarity > 0 and adjusted <= 0:
            rows[i].status = "redundant"
            continue
        chosen.append(i)
        chosen_terms.append(packet.terms)
        used += packet.tokens
    return chosen


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
