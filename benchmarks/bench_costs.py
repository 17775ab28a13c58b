"""The cost calculator over long runs: time for 10,000 steps, and whether it grows linearly.
Prints figures; asserts nothing.

    python benchmarks/bench_costs.py

Linear growth shows as a flat "microseconds per step" column; the ratio column compares each
size with the smallest one.
"""
from __future__ import annotations


from timing import best_time  # noqa: E402
from solutions import costs as C

SIZES = (1_250, 2_500, 5_000, 10_000, 20_000)
PRICES = C.Prices(5.0, 0.5, 25.0, cache_write=6.25, name="write premium")


def strategy_timings() -> None:
    print("simulate + price one strategy (summary calls counted, 128-token cache blocks):")
    labels = ("full, no cache", "full, append-only", "compact every step", "compact at threshold")
    print(f"{'steps':>7} " + " ".join(f"{label:>24}" for label in labels))
    for steps in SIZES:
        run = C.Run(steps=steps)
        cells = []
        for strategy in C.COST_STRATEGIES:
            seconds = best_time(lambda: C.price_requests(
                C.simulate(strategy, run, C.OPENAI_RULES, summary_calls=True), PRICES))
            cells.append(f"{seconds * 1e3:8.1f} ms {seconds / steps * 1e6:5.2f} us/st")
        print(f"{steps:>7,} " + " ".join(f"{c:>24}" for c in cells))


def price_run_timings() -> None:
    print("\nprice_run on per-step lists (validation included), and the full calculator view:")
    print(f"{'steps':>7} {'price_run (ms)':>15} {'us/step':>8} {'ratio':>6} "
          f"{'table+curves (ms)':>18} {'us/step':>8}")
    first = None
    from lesson_support.widgets.costs import calculator_view
    for steps in SIZES:
        run = C.Run(steps=steps)
        prompts = [C.full_history_prompt(s, run) for s in range(1, steps + 1)]
        cached = C.append_only_shared(prompts)
        seconds = best_time(lambda: C.price_run(prompts, cached, PRICES))
        view = best_time(lambda: calculator_view(run, PRICES, C.OPENAI_RULES), repeats=3)
        per_step = seconds / steps
        first = first or per_step
        print(f"{steps:>7,} {seconds * 1e3:>15.2f} {per_step * 1e6:>8.2f} {per_step / first:>6.2f} "
              f"{view * 1e3:>18.1f} {view / steps * 1e6:>8.2f}")


if __name__ == "__main__":
    strategy_timings()
    price_run_timings()
