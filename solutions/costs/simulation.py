"""The run model: the billed requests of a whole run under each way of treating the history
and the cache, their cost side by side, and the step from which compacting pays.

A strategy is a `CostStrategy` member. Its value is a stable name for code
(`CostStrategy("full_cached")`); its `label` is what tables and charts show. The simulation
dispatches on the member, never on the label.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum

from course.tables import text_table

from solutions.costs.billing import Request, cumulative_cost_by_step, price_requests, price_run
from solutions.costs.breakpoints import Breakpoints
from solutions.costs.prices import SEED_PRICES, Prices, check_prices
from solutions.costs.run import (EXACT, SEED_RUN, CacheRules, Call, Run, append_only_shared,
                                 compacted_prompt, full_history_prompt, prefix_only_shared)
from solutions.costs.schedule import compaction_schedule, default_threshold


class CostStrategy(Enum):
    """How a run treats its history and the provider's cache."""

    FULL_NO_CACHE = ("full_no_cache", "full history, no cache")
    FULL_CACHED = ("full_cached", "full history, append-only cache")
    COMPACT_EVERY_STEP = ("compact_every_step", "compact every step, prefix cached")
    COMPACT_AT_THRESHOLD = ("compact_at_threshold", "compact at threshold, cached between")

    def __new__(cls, name: str, label: str):
        member = object.__new__(cls)
        member._value_ = name
        member.label = label
        return member

    @classmethod
    def _missing_(cls, value):
        raise ValueError(f"unknown strategy {value!r}; choose one of: "
                         f"{', '.join(s.value for s in cls)} (or a CostStrategy member)")


COST_STRATEGIES = tuple(CostStrategy)  # in the order tables and charts show them
Caching = CacheRules | Breakpoints     # automatic or explicit caching


# --------------------------------------------------------------------------- the study guide's lab

def seed_lab3(run: Run = SEED_RUN, prices: Prices = SEED_PRICES) -> dict:
    """The study guide's third lab, computed: token totals and the three dollar figures."""
    steps = range(1, run.steps + 1)
    full = [full_history_prompt(s, run) for s in steps]
    compact = [compacted_prompt(s, run) for s in steps]
    return {
        "full_total_input": sum(full),
        "compacted_total_input": sum(compact),
        "full_last_step": full[-1],
        "compacted_last_step": compact[-1],
        "full_no_cache_usd": price_run(full, [0] * len(full), prices),
        "full_append_only_usd": price_run(full, append_only_shared(full), prices),
        "compacted_prefix_only_usd": price_run(compact,
                                               prefix_only_shared(compact, run.prefix_tokens),
                                               prices),
    }


def format_seed_lab3(result: dict) -> str:
    return "\n".join([
        f"full history       total input {result['full_total_input']:>9,} tokens  "
        f"last step {result['full_last_step']:>6,}",
        f"compacted history  total input {result['compacted_total_input']:>9,} tokens  "
        f"last step {result['compacted_last_step']:>6,}",
        "",
        f"full history, no cache               ${result['full_no_cache_usd']:.4f}",
        f"full history, append-only cache hits ${result['full_append_only_usd']:.4f}",
        f"compacted, only the prefix cached    ${result['compacted_prefix_only_usd']:.4f}",
    ])


# --------------------------------------------------------------------------- one run, simulated

def _agent_calls(prompts, shared, run: Run) -> list[Call]:
    return [Call(step, prompt, common, run.output_tokens)
            for step, (prompt, common) in enumerate(zip(prompts, shared), start=1)]


def _with_summaries(agent: list[Call], summaries: dict[int, int], run: Run) -> list[Call]:
    """The agent's calls with each compaction's summarising call just before its step's call.
    The summarising call resends the old history (`summaries[step]` tokens) plus an
    instruction: it shares the previous call as a prefix, and its reply is the summary."""
    calls, previous = [], 0
    for call in agent:
        if call.step in summaries:
            prompt = summaries[call.step] + run.summary_request_tokens
            calls.append(Call(call.step, prompt, min(previous, prompt), run.summary_tokens,
                              "summary"))
        calls.append(call)
        previous = call.prompt
    return calls


def _full_history(run: Run, threshold, summary_calls) -> list[Call]:
    prompts = [full_history_prompt(s, run) for s in range(1, run.steps + 1)]
    return _agent_calls(prompts, append_only_shared(prompts), run)


def _compact_every_step(run: Run, threshold, summary_calls) -> list[Call]:
    steps = range(1, run.steps + 1)
    prompts = [compacted_prompt(s, run) for s in steps]
    agent = _agent_calls(prompts, prefix_only_shared(prompts, run.prefix_tokens), run)
    if not summary_calls:
        return agent
    # a compacting step summarises what the step before sent, plus the step it adds
    return _with_summaries(agent, {s: prompts[s - 2] + run.step_tokens for s in steps
                                   if s - 1 - run.keep_recent > 0}, run)


def _compact_at_threshold(run: Run, threshold, summary_calls) -> list[Call]:
    schedule = compaction_schedule(run, default_threshold(run) if threshold is None else threshold)
    agent = _agent_calls(schedule.prompt_tokens, schedule.shared_tokens, run)
    if not summary_calls:
        return agent
    return _with_summaries(agent, dict(zip(schedule.compacted_at, schedule.uncompacted)), run)


_CALLS: dict[CostStrategy, Callable[..., list[Call]]] = {
    CostStrategy.FULL_NO_CACHE: _full_history,
    CostStrategy.FULL_CACHED: _full_history,
    CostStrategy.COMPACT_EVERY_STEP: _compact_every_step,
    CostStrategy.COMPACT_AT_THRESHOLD: _compact_at_threshold,
}


def run_calls(strategy: CostStrategy | str, run: Run = SEED_RUN, threshold: int | None = None,
              summary_calls: bool = False) -> list[Call]:
    """The calls of a run under `strategy`, in the order they are made, before any caching."""
    return _CALLS[CostStrategy(strategy)](run, threshold, summary_calls)


def simulate(strategy: CostStrategy | str, run: Run = SEED_RUN, rules: Caching = EXACT,
             threshold: int | None = None, summary_calls: bool = False) -> list[Request]:
    """The billed requests of a run under `strategy` (a CostStrategy or its value's name).

    `rules` is how the provider caches: `CacheRules` for automatic caching (every token not
    read is written), `Breakpoints` for explicit caching (writes only at breakpoints, entries
    expire). With summary_calls=True each compaction also pays for the call that writes the
    summary (the study guide leaves it out). COMPACT_EVERY_STEP is the study guide's
    pessimistic case: the history is rewritten at every step past `keep_recent`, so only the
    fixed prefix is ever cached.
    """
    strategy = CostStrategy(strategy)
    calls = run_calls(strategy, run, threshold, summary_calls)
    if strategy is CostStrategy.FULL_NO_CACHE:  # nothing read, nothing written
        return [Request(c.step, c.prompt, 0, c.completion, 0, c.kind) for c in calls]
    if not isinstance(rules, (CacheRules, Breakpoints)):
        raise TypeError(f"rules must be CacheRules (automatic caching) or Breakpoints "
                        f"(explicit caching), not {type(rules).__name__}")
    return rules.bill(calls, run.prefix_tokens)


def billed_prices(prices: Prices, rules: Caching) -> Prices:
    """The prices a run is billed at under `rules`: a 1-hour TTL writes at twice the input."""
    return rules.write_prices(prices) if isinstance(rules, Breakpoints) else check_prices(prices)


# --------------------------------------------------------------------------- side by side

def strategy_table(run: Run = SEED_RUN, prices: Prices = SEED_PRICES, rules: Caching = EXACT,
                   threshold: int | None = None, summary_calls: bool = False) -> list[dict]:
    """One row per strategy: input tokens, cache hit rate, last request, compactions, USD.
    `strategy` is the label to show; `key` is the CostStrategy itself."""
    prices = billed_prices(prices, rules)
    rows = []
    for strategy in COST_STRATEGIES:
        requests = simulate(strategy, run, rules, threshold, summary_calls)
        agent = [r for r in requests if r.kind == "agent"]
        prompt = sum(r.prompt_tokens for r in requests)
        cached = sum(r.cached_tokens for r in requests)
        rows.append({
            "strategy": strategy.label,
            "key": strategy,
            "input_tokens": prompt,
            "cached_tokens": cached,
            "hit_rate": cached / prompt if prompt else 0.0,
            "last_prompt": agent[-1].prompt_tokens,
            "calls": len(requests),
            "usd": price_requests(requests, prices),
        })
    return rows


def format_strategy_table(rows: Sequence[dict]) -> str:
    return text_table(["strategy", "input tokens", "hit rate", "last step", "calls", "USD"],
                      [[r["strategy"], f"{r['input_tokens']:,}", f"{r['hit_rate']:.1%}", f"{r['last_prompt']:,}",
                        r["calls"], f"{r['usd']:.4f}"] for r in rows],
                      "<>>>>>", widths=[38, 13, 8, 10, 5, 9])


def break_even_step(baseline: Sequence[float], candidate: Sequence[float]) -> int | None:
    """First step (1-based) from which `candidate`'s cumulative cost stays strictly below
    `baseline`'s until the end; None if it is not cheaper at the end."""
    if len(baseline) != len(candidate):
        raise ValueError(f"the two runs have {len(baseline)} and {len(candidate)} steps")
    found = None
    for step in range(len(baseline), 0, -1):
        if candidate[step - 1] < baseline[step - 1]:
            found = step
        else:
            break
    return found


def compaction_break_even(run: Run = SEED_RUN, prices: Prices = SEED_PRICES,
                          rules: Caching = EXACT, threshold: int | None = None,
                          summary_calls: bool = True) -> int | None:
    """The step from which compacting at a threshold is cheaper than keeping the full,
    cached history (None: not within the run)."""
    prices = billed_prices(prices, rules)

    def curve(strategy: CostStrategy) -> list[float]:
        return cumulative_cost_by_step(simulate(strategy, run, rules, threshold, summary_calls),
                                       prices, run.steps)

    return break_even_step(curve(CostStrategy.FULL_CACHED),
                           curve(CostStrategy.COMPACT_AT_THRESHOLD))
