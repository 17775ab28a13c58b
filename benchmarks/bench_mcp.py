"""Chapter 18 in tokens and dollars: what MCP tool schemas cost a session, what a change does to
the cache, three strategies on the same tasks, and the risks caught.

    python benchmarks/bench_mcp.py

Tokens are o200k_base counts under the teaching model's template and its reported usage (a
private teaching model per measurement), the same on every machine; dollars are chapter 05's
calculator on data/prices (dated rows). Seconds are wall-clock time on this machine, which a busy
2-core machine moves a lot: read them as orders of magnitude. In code execution the program is
the task's own, written by the course (the teaching model cannot write code).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a clone without installing

from lesson_support.mcp import cost, risks  # noqa: E402
from lesson_support.mcp.strategies import compare, totals  # noqa: E402


def token_table() -> None:
    rows = cost.token_table()
    names = cost.PRICES
    print("What the tool schemas alone add to a session (USD for the tools' share of the prompt):")
    print(f"{'servers':<38} {'tools':>5} {'tokens':>7} {'requests':>8} {'sent':>10}"
          + "".join(f" {n.split(' (')[0][:22] + ' unc.':>28} {'cached':>9}" for n in names))
    for r in rows:
        print(f"{r['servers']:<38} {r['tools']:>5} {r['schema_tokens']:>7,} {r['requests']:>8} "
              f"{r['tokens_sent']:>10,}" + "".join(
                  f" {r[f'{n}: uncached']:>28.4f} {r[f'{n}: cached']:>9.4f}" for n in names))


def cache_rows() -> None:
    print("\nThe same request three times with the four servers' tools (private teaching model):")
    for n, r in enumerate(cost.measured_session(), 1):
        print(f"  request {n}: {r['prompt_tokens']:,} prompt tokens, {r['cached_tokens']:,} cached")
    print("\nA change between two requests of a session (second request):")
    print(f"  {'change':<44} {'prompt':>7} {'cached':>7} {'not cached':>10}")
    for r in cost.mid_session():
        print(f"  {r['change']:<44} {r['prompt_tokens']:>7,} {r['cached_tokens']:>7,} {r['not_cached']:>10,}")


def strategies() -> None:
    rows = compare()
    print("\nSix tasks, three strategies (four servers, 122 tools; one private teaching model per task):")
    print(f"  {'strategy':<15} {'task':<70} {'req':>3} {'prompt':>7} {'largest':>7} {'ok':>3} {'s':>6}  called")
    for r in rows:
        print(f"  {r['strategy']:<15} {r['task'][:70]:<70} {r['requests']:>3} {r['prompt_tokens']:>7,} "
              f"{r['largest_prompt']:>7,} {'yes' if r['success'] else 'no':>3} {r['seconds']:>6.2f}  "
              f"{', '.join(r['called'])}")
    print(f"\n  {'strategy':<15} {'succeeded':>9} {'requests':>8} {'prompt tokens':>13} {'largest':>8} {'seconds':>8}")
    for t in totals(rows):
        print(f"  {t['strategy']:<15} {t['succeeded']:>5} of {t['tasks']} {t['requests']:>8} "
              f"{t['prompt_tokens']:>13,} {t['largest_prompt']:>8,} {t['seconds']:>8.1f}")


def risk_rows() -> None:
    pulled = risks.rug_pull()
    print(f"\nRug pull: approved {pulled['approved']!r}; the server then serves "
          f"{pulled['served_now'][:60]!r}...\n  pinning: {pulled['refused']}\n  review flags: {pulled['review']}")
    clash = risks.collision()
    print(f"Name collision: {clash['unprefixed_names']} -> {clash['unprefixed']}; namespaced: {clash['namespaced_names']}")
    for defence in risks.DEFENCES:
        r = risks.injected_result(defence)
        print(f"Injected tool result, defence {defence!r}: canary {'TRIPPED' if r['tripped'] else 'not tripped'}"
              f" (tools offered: {', '.join(r['tools_offered'])})")


if __name__ == "__main__":
    token_table()
    cache_rows()
    strategies()
    risk_rows()
