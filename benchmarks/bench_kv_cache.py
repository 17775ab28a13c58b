"""Prefill of the Chapter 05 numpy transformer (lesson_support/kv_cache.py): counted work and
measured time as the prompt doubles, and decoding with and without the cache. Prints figures;
asserts nothing.

    python benchmarks/bench_kv_cache.py

Each doubling of the prompt doubles the K/V rows (one per token per layer) but roughly
quadruples the query-key comparisons, since every token compares with all tokens before it.
The multiply-add count mixes the linear projections with the quadratic attention, so its ratio
climbs towards 4 as the attention part takes over; the measured time follows it (noisy: the
fastest of several runs is kept).
"""
from __future__ import annotations

import os

# One BLAS thread: on a small, shared machine the thread pool's start-up and contention swamp
# these small matrix products and hide how the work grows. Set before numpy is imported.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

from timing import best_time  # noqa: E402

from lesson_support.kv_cache import TinyModel, generation_work, prefill, prefill_work  # noqa: E402

LENGTHS = (256, 512, 1024, 2048, 4096)


def prefill_table(model: TinyModel) -> None:
    tokens = [f"t{i % 50}" for i in range(max(LENGTHS))]
    print(f"prefill, {model.n_layers} layers, d = {model.d}")
    print(f"{'tokens':>6} {'K/V rows':>9} {'comparisons':>12} {'multiply-adds':>14} {'time ms':>8}"
          f"   x rows  x comp.  x m-adds  x time")
    previous = first = None
    for n in LENGTHS:
        work = prefill_work(model, n)
        seconds = best_time(lambda: prefill(model, tokens[:n]), repeats=3)
        line = (f"{n:>6} {work.kv_rows:>9,} {work.scores:>12,} {work.flops:>14,} "
                f"{seconds * 1000:>8.2f}")
        if previous:
            pw, ps = previous
            line += (f"   {work.kv_rows / pw.kv_rows:>6.2f} {work.scores / pw.scores:>8.2f} "
                     f"{work.flops / pw.flops:>9.2f} {seconds / ps:>7.2f}")
        print(line)
        previous = (work, seconds)
        first = first or previous
    (w0, t0), (w1, t1) = first, previous
    grow = LENGTHS[-1] / LENGTHS[0]
    print(f"{LENGTHS[0]} -> {LENGTHS[-1]} tokens ({grow:.0f}x longer): comparisons "
          f"{w1.scores / w0.scores:.0f}x, time {t1 / t0:.0f}x (linear growth would be {grow:.0f}x, "
          f"quadratic {grow ** 2:.0f}x)")


def generation_table(model: TinyModel, prompt: int = 1000) -> None:
    print(f"\nwriting new tokens after a {prompt:,}-token prompt: K/V rows computed")
    print(f"{'new tokens':>10} {'no cache':>12} {'with cache':>11} {'ratio':>7}")
    for new in (1, 10, 100, 1000):
        without = generation_work(model, prompt, new, cached=False)
        with_cache = generation_work(model, prompt, new, cached=True)
        print(f"{new:>10,} {without.kv_rows:>12,} {with_cache.kv_rows:>11,} "
              f"{without.kv_rows / with_cache.kv_rows:>7.1f}")


if __name__ == "__main__":
    model = TinyModel()
    prefill_table(model)
    generation_table(model)
