"""forget: the policy that lets a memory go (age, disuse, an explicit request).

A forgotten record is kept with status "forgotten" until the store deletes it: the decision is
visible and reversible until then. An explicit request ("forget where I live") names a key, or
"*" for everything the user has told; it wins over any policy. Superseded records age like the
rest: their validity ended, their history fades with them.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from course.givens.memory import ForgetPolicy, MemoryRecord


def forget(records, now: datetime, policy: ForgetPolicy = ForgetPolicy(),
           requests=()) -> list[MemoryRecord]:
    """`records` with those the policy or a request lets go marked "forgotten" (same order).
    `requests` holds (user, key) pairs; key "*" means every record of that user."""
    asked = set(requests)
    out = []
    for r in records:
        reason = (r.user, r.key) in asked or (r.user, "*") in asked
        if policy.max_age_days is not None and now - r.time > timedelta(days=policy.max_age_days):
            reason = reason or r.uses < policy.min_uses
        if policy.idle_days is not None:
            reason = reason or now - (r.last_used or r.time) > timedelta(days=policy.idle_days)
        out.append(replace(r, status="forgotten") if reason and r.status != "forgotten" else r)
    return out
