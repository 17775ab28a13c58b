"""Cache keys as architecture (Chapter 15): how many prompt prefixes a fragment scheme makes.

A system prompt assembled from fragments is cached as a prefix: everything up to the first byte
that differs is reused. A fragment with two texts (a switch: verbose or brief, a plan, a date)
doubles the prefixes the provider must cache, so N independent switches before the cache
boundary make 2^N variants, each cold the first time it is sent (the textbook, part 6; the second
textbook section, 21.6.8-21.6.9). Moving the dynamic fragments after the boundary leaves one
cached prefix; what changes then costs only the tokens after it.
"""
from __future__ import annotations

from itertools import islice, product

from course.givens.architecture import BOUNDARY


def _check(fragments) -> None:
    if not isinstance(fragments, list):
        raise ValueError("fragments must be a list of {'name', 'texts'} dicts")
    boundaries = 0
    for f in fragments:
        if not isinstance(f, dict) or not isinstance(f.get("name"), str) or \
                not isinstance(f.get("texts"), list) or not f["texts"] or \
                not all(isinstance(t, str) for t in f["texts"]):
            raise ValueError(f"a fragment is a dict with a name and a non-empty list of texts; "
                             f"got {f!r:.120}")
        boundaries += is_boundary(f)
    if boundaries > 1:
        raise ValueError(f"a scheme has at most one cache boundary, this one has {boundaries}")


def is_boundary(fragment: dict) -> bool:
    return fragment.get("texts") == [BOUNDARY]


def _before(fragments: list[dict]) -> list[dict]:
    out = []
    for f in fragments:
        if is_boundary(f):
            break
        out.append(f)
    return out


def cache_variants(fragments, max_listed=64):
    """{"count": the distinct prefixes the scheme can send before its boundary (the whole prompt
    when it has none): the product of each fragment's number of distinct texts,
    "prefixes": the first `max_listed` of them (fragments' texts joined by blank lines, in
    itertools.product order), "dynamic": the names of the fragments before the boundary that
    have more than one text}. Raises ValueError for a malformed scheme."""
    _check(fragments)
    head = _before(fragments)
    choices = [list(dict.fromkeys(f["texts"])) for f in head]
    count = 1
    for c in choices:
        count *= len(c)
    prefixes = ["\n\n".join(p) for p in islice(product(*choices), max(0, max_listed))]
    return {"count": count, "prefixes": prefixes,
            "dynamic": [f["name"] for f, c in zip(head, choices) if len(c) > 1]}


def move_after_boundary(fragments):
    """A new scheme: the static fragments (one distinct text) in their order, then the boundary
    (added when there is none), then the dynamic fragments in their order. The input is not
    changed. Raises ValueError for a malformed scheme."""
    _check(fragments)
    rest = [f for f in fragments if not is_boundary(f)]
    static = [f for f in rest if len(set(f["texts"])) == 1]
    dynamic = [f for f in rest if len(set(f["texts"])) > 1]
    return static + [{"name": "boundary", "texts": [BOUNDARY]}] + dynamic
