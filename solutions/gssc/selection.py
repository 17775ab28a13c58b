"""Select: score each candidate (relevance, recency, priority) and fill the budget greedily."""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import AbstractSet, Iterable, Sequence

from solutions.gssc.config import ContextConfig
from solutions.gssc.matching import overlap, query_terms
from solutions.gssc.packets import Packet, as_datetime


def recency(timestamp: datetime, now: datetime, half_life_hours: float = 24.0) -> float:
    """1.0 for something written now, 0.5 one half-life ago, 0.25 two half-lives ago...
    Anything dated after `now` counts as new (1.0)."""
    age = (as_datetime(now) - as_datetime(timestamp)).total_seconds()
    return _decay(age, half_life_hours)


def _decay(age_seconds: float, half_life_hours: float) -> float:
    return 0.5 ** (max(age_seconds, 0.0) / 3600 / half_life_hours)


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


@dataclass
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


def _rank_key(row: Row):
    # Highest score first; ties: cheaper first, then newer, then by text (input order never matters).
    p = row.packet
    return (-row.score, p.tokens, -p.epoch, p.source, p.content)


def _score(row: Row) -> float:
    return row.score


def _ranked(rows: list[Row]) -> list[Row]:
    """The rows in `_rank_key` order. Sorted on the score alone first: a float key makes no
    tuple per row (at 100k rows those tuples were much of what the garbage collector had to
    chase); only runs of rows that tie on the score are then ordered by the whole key."""
    rows = sorted(rows, key=_score, reverse=True)  # stable: ties keep their order
    scores = list(map(_score, rows))
    start = 0
    for end in range(1, len(rows) + 1):
        if end == len(rows) or scores[end] != scores[start]:
            if end - start > 1:
                rows[start:end] = sorted(rows[start:end], key=_rank_key)
            start = end
    return rows


def _jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared) if a or b else 0.0


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
    now = (as_datetime(now) if now is not None else default_now(packets)).timestamp()
    wanted, rows = query_terms(query), []
    for p in packets:
        rel = _relevance(p, wanted)
        rec = _decay(now - p.epoch, config.half_life_hours)
        rows.append(Row(p, rel, rec, _value(p, rel, rec, config), "below min relevance"))

    eligible = _ranked([r for r in rows if r.relevance >= config.min_relevance])
    if config.diversity > 0:
        _fill_diverse(eligible, budget, config.diversity)
    else:
        for rank, row in enumerate(greedy_fill(eligible, budget)):
            row.status, row.rank = "selected", rank
        for row in eligible:
            if row.rank is None:
                row.status = "did not fit"
    return rows


def greedy_fill(ranked: Sequence[Packet], budget: int) -> list[Packet]:
    """Walk the packets in the order given (best first) and take each one that still fits in
    `budget` tokens. A packet that does not fit is skipped and the walk goes on: a smaller one
    further down may still fit. (Works for anything with a `tokens` attribute.)"""
    chosen, used = [], 0
    for p in ranked:
        if used + p.tokens <= budget:
            chosen.append(p)
            used += p.tokens
    return chosen


def _fill_diverse(ranked: list[Row], budget: int, diversity: float) -> None:
    """The fill with a penalty for repeating what is already chosen (sets each row's status).

    Lazy greedy: a candidate's penalty can only grow as more is chosen, so a stale score is an
    upper bound; recompute it when it reaches the top, and take it if it still beats the rest.
    """
    heap = [(-row.score, order, row) for order, row in enumerate(ranked)]
    heapq.heapify(heap)
    chosen_terms, used = [], 0
    while heap:
        _, order, row = heapq.heappop(heap)
        if used + row.tokens > budget:
            row.status = "did not fit"
            continue
        similarity = max((_jaccard(row.packet.terms, t) for t in chosen_terms), default=0.0)
        adjusted = row.score - diversity * similarity
        if heap and adjusted < -heap[0][0]:
            heapq.heappush(heap, (-adjusted, order, row))
            continue
        if similarity > 0 and adjusted <= 0:
            row.status = "redundant"
            continue
        row.status, row.rank = "selected", len(chosen_terms)
        chosen_terms.append(row.packet.terms)
        used += row.tokens


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
