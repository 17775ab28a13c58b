"""Measuring: send a scripted run to an OpenAI-compatible endpoint, record what its usage
reports per call next to our own prediction of the cached prefix, and tabulate the hit rates.

Usage is read only through `course.usage.read_usage`, so every provider shape works; a figure the
provider does not report is None (shown as "not reported by this provider"), never 0."""
from __future__ import annotations

from typing import NamedTuple

from lesson_support.cache_experiment.building import STRATEGIES, RunState, build_request
from lesson_support.cache_experiment.script import scripted_steps
from course.usage import describe, read_usage, total
from course.tables import text_table
from solutions.costs import OPENAI_RULES, CacheRules
from solutions.tokens import request_token_ids


class RequestRecord(NamedTuple):
    call: int               # 1-based call number in the run
    prompt_tokens: int | None      # reported by the API (None: not reported)
    cached_tokens: int | None      # reported by the API (None: not reported, e.g. Ollama)
    completion_tokens: int | None  # reported by the API
    counted_tokens: int     # count_request_tokens of the request we sent
    expected_cached: int    # our own prediction: longest shared prefix under `rules`


def _shared_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def expected_cached_tokens(earlier: list[list[int]], ids: list[int],
                           rules: CacheRules = OPENAI_RULES) -> int:
    """Cached tokens a prefix cache should report: the longest prefix `ids` shares with any
    earlier request, rounded down to whole blocks, 0 below the minimum."""
    return rules.cached(max((_shared_prefix(e, ids) for e in earlier), default=0))


def run_strategy(client, strategy: str, model: str | None = None, steps: int = 12,
                 rules: CacheRules = OPENAI_RULES) -> list[RequestRecord]:
    """Send one scripted run under `strategy` and record what the API reports per call."""
    if model is None:
        import course.llm

        model = course.llm.model_name()
    script = scripted_steps(steps)
    state, sent, records = RunState(), [], []
    for k in range(steps):
        messages, tools = build_request(strategy, k, script, state)
        ids = request_token_ids(messages, tools)
        # max_completion_tokens: OpenAI's reasoning models refuse the older max_tokens
        response = client.chat.completions.create(model=model, messages=messages, tools=tools,
                                                  max_completion_tokens=64)
        usage = read_usage(response.usage)  # any provider's shape; None where not reported
        records.append(RequestRecord(
            k + 1, usage.prompt, usage.cached, usage.completion, len(ids),
            expected_cached_tokens(sent, ids, rules)))
        sent.append(ids)
    return records


def measure_strategies(client, model: str | None = None, strategies=None, steps: int = 12,
                       rules: CacheRules = OPENAI_RULES) -> dict[str, list[RequestRecord]]:
    """{strategy: its per-call records}, every strategy replaying the same scripted run."""
    names = list(STRATEGIES) if strategies is None else list(strategies)
    return {name: run_strategy(client, name, model, steps, rules) for name in names}


def hit_rate_table(measurements: dict[str, list[RequestRecord]]) -> list[dict]:
    """One row per strategy: prompt and cached tokens summed over the run, and the hit rate.
    A figure the provider does not report stays None, and so do the figures computed from it."""
    rows = []
    for name, records in measurements.items():
        prompt = total(r.prompt_tokens for r in records)
        cached = total(r.cached_tokens for r in records)
        known = prompt is not None and cached is not None
        rows.append({"strategy": name, "calls": len(records), "prompt_tokens": prompt,
                     "cached_tokens": cached,
                     "hit_rate": (cached / prompt if prompt else 0.0) if known else None,
                     "calls_with_hits": (sum(1 for r in records if r.cached_tokens)
                                         if cached is not None else None),
                     "last_prompt": records[-1].prompt_tokens if records else 0})
    return rows


def format_hit_rate_table(rows: list[dict]) -> str:
    lines = []
    for r in rows:
        if r["cached_tokens"] is None or r["prompt_tokens"] is None:
            lines.append([r["strategy"], describe(r["prompt_tokens"]), f"cached: {describe(r['cached_tokens'])}"])
        else:
            lines.append([r["strategy"], f"{r['prompt_tokens']:,}", f"{r['cached_tokens']:,}",
                          f"{r['hit_rate']:.1%}", f"{r['calls_with_hits']:>4}/{r['calls']:<4}"])
    return text_table(["strategy", "prompt tokens", "cached", "hit rate", "calls hit"], lines, "<>>>>",
                      widths=[28, 13, 8, 8, 9])


def _bar_colour(rate: float, best: float) -> str:
    """Green: as good as the best strategy (within 10 %); orange: at least half; red: less."""
    if best and rate >= 0.9 * best:
        return "tab:green"
    return "tab:orange" if best and rate >= 0.5 * best else "tab:red"


def plot_hit_rates(rows: list[dict], ax=None):
    """Horizontal bars of the cache hit rate per strategy, best at the top, each labelled."""
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r["hit_rate"] is not None]  # no bar for a figure not reported
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    ordered = sorted(rows, key=lambda r: r["hit_rate"])
    best = max((r["hit_rate"] for r in rows), default=0.0)
    rates = [100 * r["hit_rate"] for r in ordered]
    bars = ax.barh([r["strategy"] for r in ordered], rates,
                   color=[_bar_colour(r["hit_rate"], best) for r in ordered])
    ax.bar_label(bars, labels=[f"{rate:.0f} %" for rate in rates], padding=3, fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("cached share of all prompt tokens (%)")
    ax.set_title("Prompt-cache hit rate by how the requests are built")
    return ax
