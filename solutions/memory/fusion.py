"""fuse_rankings: reciprocal rank fusion (Cormack, Clarke and Buettcher, 2009).

Each ranking votes 1 / (k + rank) for every id it holds (rank from 1). Only ranks are used,
never the scores, so a BM25 score and a cosine need no common scale; k = 60 damps the weight
of the very top ranks. Ties are broken by the best rank any ranking gave, then by the id, so
the fused order is the same on every run.
"""
from __future__ import annotations


def rrf_scores(rankings, k: int = 60) -> dict[str, float]:
    """Every id's fused score: the sum over the rankings that hold it of 1 / (k + rank)."""
    if k < 0:
        raise ValueError(f"k must be at least 0, not {k}")
    scores: dict[str, float] = {}
    for ranking in rankings:
        seen = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:  # a ranking lists an id once; a repeat votes nothing
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return scores


def fuse_rankings(rankings, k: int = 60, limit: int | None = None) -> list[str]:
    """The ids of all `rankings` (lists of ids, best first) in fused order, best first."""
    rankings = [list(r) for r in rankings]
    scores = rrf_scores(rankings, k)
    best = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            best[item] = min(best.get(item, rank), rank)
    # rounded: the same ranks summed in another order must tie, not differ in the last bit
    order = sorted(scores, key=lambda item: (-round(scores[item], 12), best[item], item))
    return order if limit is None else order[:limit]
