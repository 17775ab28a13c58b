"""Monitoring: how often the bar told the truth (the textbook's third lesson on status bars).

Models trust the bar almost without checking, so an error in it flows straight into answers.
The bar's accuracy against ground truth is the first metric to watch in production.
"""
from __future__ import annotations

from course.givens.status_bar import parse_status
from solutions.status_bar.render import status_fields


def _fields(status) -> dict[str, str]:
    if isinstance(status, str):
        return parse_status(status)
    if isinstance(status, dict):
        return status_fields(status)
    raise TypeError(f"a status is a status dict or a rendered <agent_status> block, "
                    f"not {type(status).__name__}")


def field_errors(shown, truth) -> dict[str, tuple[str | None, str | None]]:
    """{key: (what the bar showed, the truth)} for every field where the two differ
    (None: the field is missing on that side)."""
    a, b = _fields(shown), _fields(truth)
    return {key: (a.get(key), b.get(key)) for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)}


def status_accuracy(statuses, truth) -> float:
    """The share of fields the bar got right over a run, from 0.0 to 1.0.

    statuses[i] is what the bar said at step i and truth[i] what was true; each is a status
    dict or a rendered block. Every field of either side counts once per step: a wrong value, a
    missing field and an invented field are each one error.
    """
    statuses, truth = list(statuses), list(truth)
    if len(statuses) != len(truth):
        raise ValueError(f"{len(statuses)} statuses but {len(truth)} ground-truth statuses: "
                         f"give one of each per step")
    if not statuses:
        raise ValueError("no steps to compare: give at least one status and its ground truth")
    right = total = 0
    for shown, true in zip(statuses, truth):
        a, b = _fields(shown), _fields(true)
        keys = set(a) | set(b)
        total += len(keys)
        right += sum(a.get(k) == b.get(k) for k in keys)
    return right / total if total else 1.0
