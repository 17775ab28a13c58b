"""The recall benchmark's results, measured once and kept in data/memory/benchmark.json.

The whole run (24 users, 7 strategies, 3 phrasings, the real embedding model) takes a minute or
two here, too long for a lesson cell; the lesson prints the stored results, and anyone can
measure them again:

    python -m lesson_support.memory            # rewrites data/memory/benchmark.json

The file says when, on what machine and with which embedding model it was measured. Beside it,
data/memory/real_extraction.json: extraction on the local real model set against the rule
(`real_extraction`), written by benchmarks/record_memory_extraction.py.
"""
from __future__ import annotations

import json
import os
import platform
import time
from datetime import datetime, timezone

from course.paths import DATA_DIR
from lesson_support.memory.benchmark import generate
from lesson_support.memory.comparison import hit_rates, retrieval_hits, wins
from lesson_support.memory.embedding import Embedder
from lesson_support.memory.strategies import HISTORY_BUDGET, K, SEEDS, run_benchmark, summary

RECORDED = DATA_DIR / "memory" / "benchmark.json"


def measure(seed: int = 17, users: int = 24) -> dict:
    embedder = Embedder()
    histories = generate(seed, users)
    start = time.perf_counter()
    rows = run_benchmark(histories, embedder=embedder)
    seconds = time.perf_counter() - start
    comparison = {}
    for scope, pooled in (("per user", False), ("pooled", True)):
        for k in (1, K):
            found = retrieval_hits(histories, embedder, k, pooled)
            comparison[f"{scope}, k={k}"] = {
                "hit_rates": [{"slot": s, "phrasing": p, "mode": m, "hits": h, "n": n}
                              for (s, p, m), (h, n) in sorted(hit_rates(found).items())],
                "lexical_wins": wins(found, "lexical", "dense"), "dense_wins": wins(found, "dense", "lexical"),
                "fused_wins": wins(found, "fused", "dense") + wins(found, "fused", "lexical")}
    return {"provenance": {"measured_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                           "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
                           "embedder": embedder.name, "seed": seed, "users": users, "seeds": list(SEEDS),
                           "k": K, "history_budget": HISTORY_BUDGET, "benchmark_seconds": round(seconds, 1)},
            "summary": summary(rows), "comparison": comparison}


def recorded() -> dict:
    """The stored results: {"provenance", "summary" (rows of `summary`), "comparison"}."""
    if not RECORDED.exists():
        raise FileNotFoundError(f"{RECORDED} is missing: measure it with python -m lesson_support.memory")
    return json.loads(RECORDED.read_text(encoding="utf-8"))


REAL_EXTRACTION = DATA_DIR / "memory" / "real_extraction.json"


def real_extraction() -> dict:
    """Extraction on the local real model against the rule, measured once by
    benchmarks/record_memory_extraction.py: {"provenance", "sessions", "totals", "examples", "rows"}."""
    if not REAL_EXTRACTION.exists():
        raise FileNotFoundError(f"{REAL_EXTRACTION} is missing: measure it with "
                                f"python benchmarks/record_memory_extraction.py")
    return json.loads(REAL_EXTRACTION.read_text(encoding="utf-8"))


def main():
    RECORDED.parent.mkdir(parents=True, exist_ok=True)
    RECORDED.write_text(json.dumps(measure(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {RECORDED}")
