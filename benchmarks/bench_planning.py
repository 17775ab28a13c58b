"""How long the teaching model takes to plan tool calls for a long request (issue 35).

    python benchmarks/bench_planning.py

`course.llm.planning.plan_tool_groups` splits a request into asks and scores each ask against
every offered tool. Before the fix it recomputed every tool's terms (name, description,
parameters) for every ask, and the ask's terms for every tool: asks x tools term extractions.
Now each is computed once per request. The request here is about 100,000 characters (some 3,000
asks, as a long pasted log would give) against 48 tools. Both versions run in the same process,
best of 3; the plans are asserted equal. Compare the ratio, not the milliseconds.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a clone without installing

from course.llm import planning  # noqa: E402
from timing import best_time, module_at  # noqa: E402

# course/llm/planning.py before the fix (terms per ask x tool)
OLD_COMMIT = ""
WORDS = "please check the weather in Paris, then read the files and search the logs, also the time".split()


def tools() -> list[dict]:
    return [{"type": "function", "function": {
        "name": f"tool_{k}_{w}", "description": f"Does {w} things for the {k} service, e.g. lookups",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": f"the {w} query"}}}}}
        for k in range(12) for w in ("weather", "time", "search", "files")]


def request(asks: int = 3000) -> str:
    return ", ".join(" ".join(WORDS[(i + j) % len(WORDS)] for j in range(6)) for i in range(asks))


def main() -> None:
    offered, text = tools(), request()
    old = module_at(OLD_COMMIT, "course/llm/planning.py", "planning_before")
    assert old.plan_tool_groups(text, offered) == planning.plan_tool_groups(text, offered)
    before = best_time(lambda: old.plan_tool_groups(text, offered), 3)
    after = best_time(lambda: planning.plan_tool_groups(text, offered), 3)
    print(f"plan_tool_groups, {len(text):,} characters, {len(offered)} tools: "
          f"before {before * 1000:,.0f} ms, after {after * 1000:,.0f} ms, x{before / after:.1f} faster")


if __name__ == "__main__":
    main()
