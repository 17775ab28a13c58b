"""judge_task: a task succeeds when the database's end state is the expected one (tau-bench's
idea), judged by code, never by what the agent says."""
from __future__ import annotations

import copy

from course.givens.task_world import IRRELEVANT_FIELDS


def _apply(state, changes):
    """`state` with `changes` (a nested dict of the values that must hold) written into it."""
    if not isinstance(changes, dict) or not isinstance(state, dict):
        return copy.deepcopy(changes)
    out = copy.deepcopy(state)
    for key, value in changes.items():
        out[key] = _apply(out.get(key), value) if isinstance(value, dict) and isinstance(out.get(key), dict) \
            else copy.deepcopy(value)
    return out


def _relevant(state, ignore):
    if isinstance(state, dict):
        return {k: _relevant(v, ignore) for k, v in state.items() if k not in ignore}
    if isinstance(state, list):
        return [_relevant(v, ignore) for v in state]
    return state


def judge_task(db_before: dict, db_after: dict, expected: dict, ignore=IRRELEVANT_FIELDS) -> bool:
    """True when `db_after` is `db_before` with `expected`'s changes made and nothing else
    changed, fields named in `ignore` (at any depth) left out of the comparison."""
    ignore = frozenset(ignore)
    return _relevant(db_after, ignore) == _relevant(_apply(db_before, expected or {}), ignore)
