"""The one timing helper the benchmark scripts share (they import it as `timing`, since a script's
own folder is on sys.path when it runs)."""
from __future__ import annotations

import time


def best_time(fn, repeats: int = 5) -> float:
    """The fastest of `repeats` runs of fn(), in seconds: the least disturbed by a busy machine."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best
