"""The run model: the billed requests of a whole run under each way of treating the history
and the cache, their cost side by side, and the step from which compacting pays.

A strategy is a `CostStrategy` member. Its value is a stable name for code
(`CostStrategy("full_cached")`); its `label` is what tables and charts show. The simulation
dispatches on the member, never on the label.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum

from solutions.costs.billing import Request, cumulative_cost_by_step, price_requests, price_run
from solutions.costs.prices import SEED_PRICES, Prices
from solutions.costs.run import (EXACT, SEED_RUN, CacheRules, Run, append_only_shared,
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

def _agent_requests(prompts, shared, run: Run, rules: CacheRules, caching: bool) -> list[Request]:
    requests = []
    for step, (prompt, common) in enumerate(zip(prompts, shared), start=1):
        cached = rules.cached(common) if caching else 0
        written = prompt - cached if caching else 0  # automatic caching stores every new token
        requests.append(Request(step, prompt, cached, run.output_tokens, written))
    return requests


def _summary_request(step: int, uncompacted: int, previous: int, run: Run, rules: CacheRules):
    # The summarising call resends the old history plus an instruction: it shares the previous
    # request as a prefix, and its reply is the summary.
    prompt = uncompacted + run.summary_request_tokens
    cached = rules.cached(min(previous, prompt))
    return Request(step, prompt, cached, run.summary_tokens, prompt - cached, "summary")


def _full_no_cache(run: Run, rules: CacheRules, threshold, summary_calls) -> list[Request]:
    prompts = [full_history_prompt(s, run) for s in range(1, run.steps + 1)]
    return _agent_requests(prompts, [0] * run.steps, run, rules, caching=False)


def _full_cached(run: Run, rules: CacheRules, threshold, summary_calls) -> list[Request]:
    prompts = [full_history_prompt(s, run) for s in range(1, run.steps + 1)]
    return _agent_requests(prompts, append_only_shared(prompts), run, rules, caching=True)


def _compact_every_step(run: Run, rules: CacheRules, threshold, summary_calls) -> list[Request]:
    steps = range(1, run.steps + 1)
    prompts = [compacted_prompt(s, run) for s in steps]
    requests = _agent_requests(prompts, prefix_only_shared(prompts, run.prefix_tokens), run,
                               rules, caching=True)
    if summary_calls:
        for s in steps:
            if s - 1 - run.keep_recent > 0:  # a compacting step: summarise what it holds
                requests.append(_summary_request(s, prompts[s - 2] + run.step_tokens,
                                                 prompts[s - 2], run, rules))
    return requests


def _compact_at_threshold(run: Run, rules: CacheRules, threshold, summary_calls) -> list[Request]:
    schedule = compaction_schedule(run, default_threshold(run) if threshold is None else threshold)
    requests = _agent_requests(schedule.prompt_tokens, schedule.shared_tokens, run, rules,
                               caching=True)
    if summary_calls:
        for step, size in zip(schedule.compacted_at, schedule.uncompacted):
            previous = schedule.prompt_tokens[step - 2] if step > 1 else 0
            requests.append(_summary_request(step, size, previous, run, rules))
    return requests


_SIMULATE: dict[CostStrategy, Callable[..., list[Request]]] = {
    CostStrategy.FULL_NO_CACHE: _full_no_cache,
    CostStrategy.FULL_CACHED: _full_cached,
    CostStrategy.COMPACT_EVERY_STEP: _compact_every_step,
    CostStrategy.COMPACT_AT_THRESHOLD: _compact_at_threshold,
}


def simulate(strategy: CostStrategy | str, run: Run = SEED_RUN, rules: CacheRules = EXACT,
             threshold: int | None = None, summary_calls: bool = False) -> list[Request]:
    """The billed requests of a run under `strategy` (a CostStrategy or its value's name).

    With summary_calls=True each compaction also pays for the call that writes the summary
    (the study guide leaves it out). COMPACT_EVERY_STEP is the study guide's pessimistic case:
    the history is rewritten at every step past `keep_recent`, so only the fixed prefix is ever
    cached.
    """
    return _SIMULATE[CostStrategy(strategy)](run, rules, threshold, summary_calls)


# --------------------------------------------------------------------------- side by side

def strategy_table(run: Run = SEED_RUN, prices: Prices = SEED_PRICES, rules: CacheRules = EXACT,
                   threshold: int | None = None, summary_calls: bool = False) -> list[dict]:
    """One row per strategy: input tokens, cache hit rate, last request, compactions, USD.
    `strategy` is the label to show; `key` is the CostStrategy itself."""
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
    lines = [f"{'strategy':<38} {'input tokens':>13} {'hit rate':>8} {'last step':>10} "
             f"{'calls':>5} {'USD':>9}"]
    for r in rows:
        lines.append(f"{r['strategy']:<38} {r['input_tokens']:>13,} {r['hit_rate']:>8.1%} "
                     f"{r['last_prompt']:>10,} {r['calls']:>5} {r['usd']:>9.4f}")
    return "\n".join(lines)


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
                          rules: CacheRules = EXACT, threshold: int | None = None,
                          summary_calls: bool = True) -> int | None:
    """The step from which compacting at a threshold is cheaper than keeping the full,
    cached history (None: not within the run)."""
    def curve(strategy: CostStrategy) -> list[float]:
        return cumulative_cost_by_step(simulate(strategy, run, rules, threshold, summary_calls),
                                       prices, run.steps)

    return break_even_step(curve(CostStrategy.FULL_CACHED),
                           curve(CostStrategy.COMPACT_AT_THRESHOLD))
