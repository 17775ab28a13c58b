"""The layered compactor's own cost (Chapter 11): seconds to run it over the whole 212-step run,
one call per request, per configuration, offline (the summariser of layer 5 is the rule-based
one, so no model time is counted). Prints figures; asserts nothing.

    python benchmarks/bench_production_compaction.py

The last column is milliseconds per request: what the compactor adds before each model call.
"""
from __future__ import annotations

from timing import best_time  # noqa: E402
from course.givens.production_compaction import load_run
from lesson_support.production_compaction import CONFIGS
from solutions.compaction import rule_based_summary
from solutions.production_compaction import LayeredCompactor


def whole_run(run, layers) -> None:
    compactor = LayeredCompactor(layers, summarize=rule_based_summary, tools=run.tools)
    history = run.head()
    for step in run.steps:
        history = history + step["messages"]
        compactor(history)


def main() -> None:
    run = load_run()
    print(f"{'configuration':<24} {'seconds':>8} {'ms/request':>10}")
    for name, layers in CONFIGS.items():
        seconds = best_time(lambda: whole_run(run, layers), repeats=2)
        print(f"{name:<24} {seconds:>8.2f} {seconds / len(run.steps) * 1000:>10.1f}")


if __name__ == "__main__":
    main()
