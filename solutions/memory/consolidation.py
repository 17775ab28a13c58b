"""consolidate: new memories against the old ones, without losing history.

For each new record, in time order, against the records of the same user and key:

    add         nothing of that key yet (or a key that accumulates and a new value)
    merge       the same value again: the old record is kept and counted (uses + 1), the new one dropped
    update      a single-valued key, a newer value: the old record is kept, closed (valid_to = the
                new time, status "superseded", superseded_by = the new id), the new one is current
    late        an older value that arrives after a newer one: stored, already superseded
    contradict  a different value said at the same time: both are marked "contradicted" (each
                lists the other in `conflicts`); neither is trusted until a later record settles it

Values are compared casefolded with their spaces squeezed, so "Vim" merges with "vim". Forgotten
records take no part. Nothing is ever deleted here: forgetting is its own policy (forgetting.py).
"""
from __future__ import annotations

from dataclasses import replace

from course.givens.memory import MemoryRecord


def same_value(a: str, b: str) -> bool:
    return normal_value(a) == normal_value(b)


def _ids(records) -> list[MemoryRecord]:
    """Records given an id where they have none ("m-<n>"), so that links can name them."""
    taken = {r.id for r in records if r.id}
    out, n = [], 0
    for r in records:
        if not r.id:
            n += 1
            while f"m-{n}" in taken:
                n += 1
            taken.add(f"m-{n}")
            r = replace(r, id=f"m-{n}")
        out.append(r)
    return out


def normal_value(value: str) -> str:
    return " ".join(value.casefold().split())


def consolidation_actions(old, new) -> tuple[list[MemoryRecord], list[tuple[str, str]]]:
    """The store after the new records, and what happened to each: [(action, record id)]."""
    store = _ids(list(old) + list(new))
    result = store[:len(old)]
    # Only the current records of a (user, key) decide (active or contradicted ones), and a value
    # is looked up, not searched for: each new record costs the same however large the store is.
    current: dict[tuple[str, str], list[int]] = {}
    by_value: dict[tuple[str, str, str], int] = {}

    def keep_current(i: int):
        r = result[i]
        if r.status not in ("active", "contradicted"):   # a new record that came in forgotten
            return
        current.setdefault((r.user, r.key), []).append(i)
        by_value.setdefault((r.user, r.key, normal_value(r.value)), i)

    def close(i: int):
        r = result[i]
        current[(r.user, r.key)].remove(i)
        if by_value.get((r.user, r.key, normal_value(r.value))) == i:
            del by_value[(r.user, r.key, normal_value(r.value))]

    for i in range(len(result)):
        keep_current(i)
    actions = []
    for incoming in sorted(store[len(old):], key=lambda r: r.time):
        twin = by_value.get((incoming.user, incoming.key, normal_value(incoming.value)))
        if twin is not None:
            result[twin] = replace(result[twin], uses=result[twin].uses + 1)
            actions.append(("merge", result[twin].id))
            continue
        now = list(current.get((incoming.user, incoming.key), ()))
        if not incoming.single or not now:
            result.append(incoming)
            keep_current(len(result) - 1)
            actions.append(("add", incoming.id))
            continue
        newest = max(now, key=lambda i: result[i].time)
        if incoming.time > result[newest].time:
            for i in now:
                close(i)
                result[i] = replace(result[i], status="superseded", valid_to=incoming.time,
                                    superseded_by=incoming.id)
            result.append(incoming)
            keep_current(len(result) - 1)
            actions.append(("update", incoming.id))
        elif incoming.time < result[newest].time:
            result.append(replace(incoming, status="superseded", valid_to=result[newest].time,
                                  superseded_by=result[newest].id))
            actions.append(("late", incoming.id))
        else:
            rivals = [i for i in now if result[i].time == incoming.time]
            for i in rivals:
                result[i] = replace(result[i], status="contradicted",
                                    conflicts=tuple(dict.fromkeys(result[i].conflicts + (incoming.id,))))
            result.append(replace(incoming, status="contradicted",
                                  conflicts=tuple(result[i].id for i in rivals)))
            keep_current(len(result) - 1)
            actions.append(("contradict", incoming.id))
    return result, actions


def consolidate(old, new) -> list[MemoryRecord]:
    """The store after adding `new` to `old`: old records first (some closed or counted), then
    the new ones kept, in time order. See the module's docstring for the five cases."""
    return consolidation_actions(old, new)[0]
