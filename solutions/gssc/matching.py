"""Relevance: the share of a query's terms a text holds (lab 03's first exercise).

The terms themselves come with the lab (`course.givens.gssc.matching`): CJK text has no spaces,
so character pairs are terms; a query leaves out question words.
"""
from __future__ import annotations

from course.givens.gssc.matching import overlap, query_terms, terms


def relevance(query: str, text: str) -> float:
    """Share of the query's terms found in the text: 0.0 (none) to 1.0 (all)."""
    return overlap(query_terms(query), terms(text))
