"""Chapter 09 in tokens: the skill catalogue, preloading vs progressive loading, and 107 tool
schemas preloaded vs deferred behind tool_search.

    python benchmarks/bench_skills.py

Tokens are o200k_base counts under the teaching model's template, the same on every machine.
The last lines time the two pure functions a harness runs on every request (build_catalog and
the BM25 tool search); those figures depend on the machine.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a clone without installing

from timing import best_time  # noqa: E402

from lesson_support.skills import (CATALOG_BUDGET, CORE_TOOL_NAMES, SESSION,  # noqa: E402
                                   TOOL_SEARCH_TOOL, course_skills, tools_by_name,
                                   layer_rows, format_layer_rows, preload_vs_progressive,
                                   search_tools, tool_catalogue, tool_stub, tools_tokens)
from solutions.skills import build_catalog  # noqa: E402
from solutions.tokens import count_tokens  # noqa: E402


def main() -> None:
    skills = course_skills()
    catalog = build_catalog(skills, CATALOG_BUDGET)
    print(f"Skills: {len(skills)}; the <available_skills> block is {catalog.tokens} tokens.\n")
    print(format_layer_rows(layer_rows()))

    rows = preload_vs_progressive([(skill, files) for _, skill, files in SESSION])
    print(f"\nA session of {len(rows)} requests (skill tokens carried by each request):")
    print(f"{'request':>7} {'skill':<18} {'preload':>8} {'progressive':>12}")
    for r in rows:
        print(f"{r['request']:>7} {r['skill']:<18} {r['preload']:>8} {r['progressive']:>12}")
    preload, progressive = sum(r["preload"] for r in rows), sum(r["progressive"] for r in rows)
    print(f"{'total':>7} {'':<18} {preload:>8} {progressive:>12}  "
          f"(progressive is {progressive / preload:.0%} of preload)")

    catalogue = tool_catalogue()
    everything = tools_tokens(catalogue)
    stubs = count_tokens("\n".join(tool_stub(t) for t in catalogue))
    deferred = tools_tokens(tools_by_name(CORE_TOOL_NAMES, catalogue) + [TOOL_SEARCH_TOOL])
    print(f"\nTools: {len(catalogue)} in the catalogue.")
    print(f"  every schema preloaded:           {everything:>6} tokens per request")
    print(f"  one-line stubs of every tool:     {stubs:>6} tokens per request")
    print(f"  {len(CORE_TOOL_NAMES)} core tools + tool_search:     {deferred:>6} tokens per request")
    print(f"  saved per request by deferring:   {everything - deferred:>6} tokens")

    t_catalog = best_time(lambda: build_catalog(skills, CATALOG_BUDGET), repeats=20)
    t_search = best_time(lambda: search_tools("plot a bar chart of sales per region", catalogue),
                         repeats=20)
    print(f"\nbuild_catalog: {t_catalog * 1e3:.2f} ms; search_tools over {len(catalogue)} tools: "
          f"{t_search * 1e3:.2f} ms (machine-dependent)")


if __name__ == "__main__":
    main()
