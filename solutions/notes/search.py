"""Search over notes in memory: the ranking every search of the course follows.

`search_notes` is the lab's exercise and the definition; `NoteTool.search` gives the same
answer from its index without reading every note (see index.py).
"""
from __future__ import annotations

import heapq
from typing import Iterable

from course.givens.gssc.matching import overlap, query_terms
from course.givens.notes import Note, NoteError, utf8_text
from solutions.notes.format import id_number


MAX_LIMIT = 2**63 - 1  # SQLite's largest integer: any larger limit means the same, "all"


def check_limit(limit) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 0 <= limit <= MAX_LIMIT:
        shown = repr(limit) if len(repr(limit)) <= 40 else repr(limit)[:40] + "..."
        raise NoteError(f"limit must be a whole number from 0 to {MAX_LIMIT}, got {shown}")
    return limit


def search_notes(notes: Iterable[Note], query: str, limit: int = 10) -> list[Note]:
    """Notes matching `query`, best first: by relevance (share of the query's terms found in
    title, tags and content; Chinese by character pairs), then newest update, then newest id.
    Notes that match nothing are left out."""
    check_limit(limit)
    wanted = query_terms(utf8_text(query, "query"))
    hits = [(rel, n) for n in notes if (rel := overlap(wanted, n.terms)) > 0]
    # Only the best `limit` are wanted: a bounded heap instead of sorting every hit.
    best = heapq.nsmallest(limit, hits, key=lambda h: (-h[0], -h[1].updated_at.timestamp(),
                                                       -id_number(h[1].id)))
    return [n for _, n in best]


def newest_first(notes: Iterable[Note]) -> list[Note]:
    """Most recently updated first; among notes updated at the same moment, the highest id."""
    return sorted(notes, key=lambda n: (-n.updated_at.timestamp(), -id_number(n.id)))
