"""success_interval: the success rate with a Wilson interval, and pass^k; how many trials
separate two rates; the paired sign test ablate uses."""
from __future__ import annotations

import math
from collections import defaultdict
from statistics import NormalDist


def _z(level: float) -> float:
    return NormalDist().inv_cdf(1 - (1 - level) / 2)


def wilson(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial rate: inside [0, 1], never a zero width at 0 or n."""
    if n == 0:
        return 0.0, 1.0
    z = _z(level)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    if successes == 0:
        low = 0.0
    if successes == n:
        high = 1.0
    return low, high


def pass_hat_k(results: list[dict], k: int) -> float:
    """pass^k as tau-bench reports it: the chance that k trials of a task, drawn from its n,
    all succeed (C(c, k) / C(n, k)), averaged over the tasks."""
    by_task = defaultdict(list)
    for row in results:
        by_task[row["task"]].append(bool(row["success"]))
    values = [math.comb(sum(s), k) / math.comb(len(s), k) for s in by_task.values() if len(s) >= k]
    return sum(values) / len(values) if values else 0.0


def success_interval(results: list[dict], level: float = 0.95) -> dict:
    """{"n", "successes", "rate", "low", "high" (Wilson at `level`), "pass_k": {k: pass^k}} for
    k from 1 to the fewest trials any task has."""
    n = len(results)
    successes = sum(bool(r["success"]) for r in results)
    low, high = wilson(successes, n, level)
    per_task = defaultdict(int)
    for row in results:
        per_task[row["task"]] += 1
    most = min(per_task.values(), default=0)
    return {"n": n, "successes": successes, "rate": successes / n if n else 0.0, "low": low,
            "high": high, "pass_k": {k: pass_hat_k(results, k) for k in range(1, most + 1)}}


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact p-value of `wins` against `losses` discordant pairs (McNemar's exact test)."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(0, min(wins, losses) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def trials_needed(p1: float, p2: float, level: float = 0.95, power: float = 0.8) -> float:
    """Trials per configuration for a two-sided test at `level` to tell rates p1 and p2 apart
    with probability `power` (the normal approximation for two proportions); infinite when the
    rates are equal."""
    if p1 == p2:
        return math.inf
    za, zb = _z(level), NormalDist().inv_cdf(power)
    bar = (p1 + p2) / 2
    top = za * math.sqrt(2 * bar * (1 - bar)) + zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return math.ceil(top * top / (p1 - p2) ** 2)
