"""The peer design's ContextBuilder, defects included, for side-by-side comparisons.

A small re-implementation (not a copy) of the GSSC builder printed in the Hello-Agents
tutorial's chapter 9, keeping exactly the behaviour the lesson takes apart:

- `estimate_tokens`: token counts *estimated* as CJK characters + 1.3 x whitespace words
  (the framework package later used cl100k_base, falling back to len(text) // 4:
  `quarter_tokens`);
- `word_overlap`: relevance as Jaccard overlap of `str.split()` words, so a Chinese query,
  which has no spaces, scores 0 against Chinese text;
- `peer_recency`: exponential decay, clamped to [0.1, 1];
- `peer_select`: greedy fill that *stops* at the first packet that does not fit;
- `peer_structure`: sections joined by blank lines, empty sections left out;
- `peer_compress`: cuts from the top down, keeping sections until the budget runs out, so
  the `[Output]` section at the bottom is the first thing lost.

One honest change: the original read the clock (`datetime.now()`) inside select; here `now`
is a parameter so the comparisons are reproducible. Inputs are the course's own `Packet`s;
their exact `tokens` are ignored here and re-estimated the peer's way.
"""
from __future__ import annotations

import math
from datetime import datetime
from typing import Callable, Sequence

from solutions.gssc import Packet

PEER_OUTPUT = "Please provide accurate, evidence-based answers based on the above information."


def estimate_tokens(text: str) -> int:
    """The book's estimate: one token per CJK ideograph plus 1.3 per whitespace word."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    words = len(text.split())
    return int(cjk + words * 1.3)


def quarter_tokens(text: str) -> int:
    """The package's fallback when tiktoken was unavailable: a quarter of the characters."""
    return len(text) // 4


def word_overlap(query: str, content: str) -> float:
    """Jaccard overlap of lower-cased whitespace-separated words."""
    q = set(query.lower().split())
    c = set(content.lower().split())
    if not q:
        return 0.0
    union = q | c
    return len(q & c) / len(union) if union else 0.0


def peer_recency(timestamp: datetime, now: datetime) -> float:
    """exp(-0.1 * age_in_days), kept within [0.1, 1.0]."""
    age_hours = (now - timestamp).total_seconds() / 3600
    return max(0.1, min(1.0, math.exp(-0.1 * age_hours / 24)))


def peer_select(packets: Sequence[Packet], query: str, available_tokens: int, now: datetime,
                min_relevance: float = 0.1, relevance_weight: float = 0.7,
                recency_weight: float = 0.3) -> list[Packet]:
    """Score 0.7 * overlap + 0.3 * recency, drop overlap < min_relevance, fill until the
    first packet that does not fit, then stop. System packets go first, unscored."""
    system = [p for p in packets if p.pinned]
    used = sum(estimate_tokens(p.content) for p in system)
    scored = []
    for p in packets:
        if p.pinned:
            continue
        rel = p.relevance if p.relevance is not None else word_overlap(query, p.content)
        combined = relevance_weight * rel + recency_weight * peer_recency(p.timestamp, now)
        if rel >= min_relevance:
            scored.append((combined, p))
    scored.sort(key=lambda pair: pair[0], reverse=True)
    ranked = [p for _, p in scored]
    return system + fill_until_first_misfit(ranked, available_tokens - used, estimate_tokens)


def fill_until_first_misfit(ranked: Sequence[Packet], budget: int,
                            cost: Callable[[str], int] | None = None) -> list[Packet]:
    """The peer's greedy fill: take packets in order until one does not fit, then stop.
    `cost` prices a packet's content (default: its exact `tokens`, to isolate this defect)."""
    chosen, used = [], 0
    for p in ranked:
        price = cost(p.content) if cost else p.tokens
        if used + price > budget:
            break  # the defect: a smaller packet further down is never tried
        chosen.append(p)
        used += price
    return chosen


def peer_structure(packets: Sequence[Packet], query: str) -> str:
    """Sections in the peer's order; it has no [State] section (state lands in [Context])."""
    role = [p.content for p in packets if p.pinned]
    evidence = [p.content for p in packets if p.section == "Evidence"]
    context = [p.content for p in packets if not p.pinned and p.section != "Evidence"]
    sections = []
    if role:
        sections.append("[Role & Policies]\n" + "\n".join(role))
    sections.append(f"[Task]\n{query}")
    if evidence:
        sections.append("[Evidence]\n" + "\n---\n".join(evidence))
    if context:
        sections.append("[Context]\n" + "\n".join(context))
    sections.append("[Output]\n" + PEER_OUTPUT)
    return "\n\n".join(sections)


def _truncate(text: str, max_tokens: int) -> str:
    ratio = len(text) / estimate_tokens(text) if estimate_tokens(text) > 0 else 4
    return text[: int(max_tokens * ratio)]


def peer_compress(context: str, max_tokens: int) -> str:
    """Keep blank-line-separated blocks from the top while they fit; truncate the first one
    that does not (if over 50 tokens remain) and drop everything after it, [Output] included."""
    if estimate_tokens(context) <= max_tokens:
        return context
    kept, total = [], 0
    for block in context.split("\n\n"):
        cost = estimate_tokens(block)
        if total + cost <= max_tokens:
            kept.append(block)
            total += cost
        else:
            remaining = max_tokens - total
            if remaining > 50:
                kept.append(_truncate(block, remaining) + "\n[... Content compressed ...]")
            break
    return "\n\n".join(kept)


def peer_build(query: str, packets: Sequence[Packet], now: datetime, max_tokens: int = 3000,
               reserve_ratio: float = 0.2, min_relevance: float = 0.1) -> str:
    """The whole peer pipeline: select, structure and compress, all against
    max_tokens * (1 - reserve_ratio) *estimated* tokens."""
    available = int(max_tokens * (1 - reserve_ratio))
    chosen = peer_select(packets, query, available, now, min_relevance)
    return peer_compress(peer_structure(chosen, query), available)
