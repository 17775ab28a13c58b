"""The cost of an agent run (Chapter 05): full history, compaction and prompt caching, priced.

Every call of an agent resends the conversation, so the input of a run grows with the square of
its length. Two levers bring the bill down: compaction (send fewer tokens) and prompt caching
(pay a fraction for tokens the provider has seen as a prefix before). They pull against each
other, because compacting rewrites the prefix the cache depends on.

All prices are USD per million tokens. Token counts are per request:

- prompt tokens: everything sent, cached or not;
- cached tokens: the part of the prompt read from the cache (never more than the prompt);
- cache-write tokens: the part written to the cache, which some providers bill at a premium;
- completion tokens: the reply.

The study guide's third hands-on lab is reproduced by `seed_lab3()`; everything else builds on
the same few functions.
"""
from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from course.paths import DATA_DIR
from solutions.costs.prices import (MILLION, PER_TOKEN_SUSPECT, PRICE_FIELDS, SEED_PRICE_FIELDS,
                                    SEED_PRICES, Prices, _check_prices, _tokens)
from solutions.costs.run import (EXACT, OPENAI_RULES, RUN_FIELDS, SEED_RUN, SEED_RUN_FIELDS,
                                 CacheRules, Run, append_only_shared, as_run, compacted_prompt,
                                 full_history_prompt, prefix_only_shared)

PRICES_CSV = DATA_DIR / "prices" / "providers.csv"


# --------------------------------------------------------------------------- pricing requests

class Request(NamedTuple):
    """One billed call: its tokens, and the agent step it belongs to."""

    step: int
    prompt_tokens: int
    cached_tokens: int = 0
    completion_tokens: int = 0
    cache_write_tokens: int = 0
    kind: str = "agent"  # "agent", or "summary" for a compaction's summarising call


def _check_request(i: int, prompt, cached, completion, written) -> tuple[int, int, int, int]:
    """The four counts of step i+1 as ints, or a clear error saying what is impossible."""
    where = f"step {i + 1}"
    prompt = _tokens(prompt, f"{where}: prompt tokens")
    cached = _tokens(cached, f"{where}: cached tokens")
    completion = _tokens(completion, f"{where}: completion tokens")
    written = _tokens(written, f"{where}: cache-write tokens")
    if cached > prompt:
        raise ValueError(f"{where}: {cached:,} cached tokens but the prompt has only {prompt:,}. "
                         f"Cached tokens are part of the prompt and can never exceed it.")
    if written > prompt - cached:
        raise ValueError(f"{where}: {written:,} cache-write tokens but only {prompt - cached:,} "
                         f"prompt tokens were not read from the cache.")
    return prompt, cached, completion, written


def _cost(prompt: int, cached: int, completion: int, written: int, prices: Prices) -> float:
    missed = prompt - cached - written
    return (cached * prices.cached_input + written * prices.cache_write + missed * prices.input
            + completion * prices.output) / MILLION


def request_cost(prompt_tokens: int, cached_tokens: int, prices: Prices, completion_tokens: int = 0,
                 cache_write_tokens: int = 0) -> float:
    """USD for one request: hits, writes and plain misses of the prompt, plus the reply."""
    prices = _check_prices(prices)
    return _cost(*_check_request(0, prompt_tokens, cached_tokens, completion_tokens,
                                 cache_write_tokens), prices)


def _per_step(values, n: int | None, what: str) -> Sequence:
    """`values` as a per-step list (None: zeros); n=None accepts any length."""
    if values is None and n is not None:
        return [0] * n
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence):
        raise TypeError(f"{what} must be a list with one count per step, "
                        f"not {type(values).__name__}")
    if n is not None and len(values) != n:
        raise ValueError(f"{what} has {len(values)} entries but there are {n} steps")
    return values


def step_costs(prompt_tokens, cached_tokens, prices: Prices, completion_tokens=None,
               cache_write_tokens=None) -> list[float]:
    """USD per step of a run given per-step counts (see `price_run`)."""
    prices = _check_prices(prices)
    prompt = _per_step(prompt_tokens, None, "prompt_tokens")
    n = len(prompt)
    cached = _per_step(cached_tokens, n, "cached_tokens")
    completion = _per_step(completion_tokens, n, "completion_tokens")
    written = _per_step(cache_write_tokens, n, "cache_write_tokens")
    return [_cost(*_check_request(i, prompt[i], cached[i], completion[i], written[i]), prices)
            for i in range(n)]


def price_run(prompt_tokens, cached_tokens, prices: Prices, completion_tokens=None,
              cache_write_tokens=None) -> float:
    """USD for a whole run from per-step token counts and cached-prefix sizes.

    prompt_tokens[i] is what step i+1 sends; cached_tokens[i] how much of it was read from the
    cache. Optional completion_tokens and cache_write_tokens (default 0 each step) price the
    replies and cache writes. `prices` is a Prices or a dict such as
    {"input": 0.15, "cached_input": 0.003}, in USD per million tokens. Raises ValueError for
    impossible counts (cached above the prompt, negative numbers) naming the step, and for
    prices that look like per-token figures.
    """
    return math.fsum(step_costs(prompt_tokens, cached_tokens, prices, completion_tokens,
                                cache_write_tokens))


def _request_usd(r: Request, prices: Prices) -> float:
    return _cost(*_check_request(r.step - 1, r.prompt_tokens, r.cached_tokens,
                                 r.completion_tokens, r.cache_write_tokens), prices)


def price_requests(requests: Sequence[Request], prices: Prices) -> float:
    prices = _check_prices(prices)
    return math.fsum(_request_usd(r, prices) for r in requests)


def cumulative_cost_by_step(requests: Sequence[Request], prices: Prices, steps: int) -> list[float]:
    """Running total of USD after each step 1..steps (summary calls count at their step)."""
    prices = _check_prices(prices)
    per_step = [0.0] * steps
    for r in requests:
        if not 1 <= r.step <= steps:
            raise ValueError(f"request for step {r.step} is outside steps 1..{steps}")
        per_step[r.step - 1] += _request_usd(r, prices)
    total, running = 0.0, []
    for cost in per_step:
        total += cost
        running.append(total)
    return running


# --------------------------------------------------------------------------- recorded usage

def _field(obj, name):
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def usage_request(usage, step: int = 1) -> Request:
    """A `Request` from an API usage object or dict.

    Reads OpenAI's shape (prompt_tokens, completion_tokens, prompt_tokens_details.cached_tokens,
    which the teaching model also reports), DeepSeek's (prompt_cache_hit_tokens) and flat
    records with a `cached_tokens` field. Cache writes are taken from
    prompt_tokens_details.cache_write_tokens when a provider reports them.
    """
    prompt = _field(usage, "prompt_tokens")
    if prompt is None:
        raise ValueError(f"usage of step {step} has no prompt_tokens: {usage!r}")
    details = _field(usage, "prompt_tokens_details")
    cached = _field(details, "cached_tokens")
    if cached is None:
        cached = _field(usage, "prompt_cache_hit_tokens")
    if cached is None:  # a flat record, such as solutions.caching.RequestRecord
        cached = _field(usage, "cached_tokens")
    written = _field(details, "cache_write_tokens")
    return Request(step, prompt, cached or 0, _field(usage, "completion_tokens") or 0,
                   written or 0)


def price_usages(usages: Sequence, prices: Prices) -> float:
    """USD for a run priced from the `usage` records the API returned, one per request."""
    requests = [usage_request(u, step) for step, u in enumerate(usages, start=1)]
    return price_run([r.prompt_tokens for r in requests], [r.cached_tokens for r in requests],
                     prices, [r.completion_tokens for r in requests],
                     [r.cache_write_tokens for r in requests])


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


# --------------------------------------------------------------------------- compaction schedule

class Schedule(NamedTuple):
    prompt_tokens: list[int]   # sent at each step
    shared_tokens: list[int]   # prefix shared with the previous request (cacheable)
    compacted_at: list[int]    # steps (1-based) that compacted before sending
    uncompacted: list[int]     # what each compacting step would have sent without compacting


def compaction_schedule(run, threshold: int) -> Schedule:
    """Compact only when a request would exceed `threshold` tokens; append in between.

    `run` is a Run or a dict of its fields. At a compacting step the older history becomes a
    summary and the last `keep_recent` steps stay verbatim; only the fixed prefix is shared
    with the previous request. Between compactions history is only appended, so each request
    shares all of the previous one.
    """
    run = as_run(run)
    threshold = _tokens(threshold, "threshold")
    compacted_size = run.prefix_tokens + run.summary_tokens + run.step_tokens * run.keep_recent
    if compacted_size > threshold:
        raise ValueError(
            f"threshold {threshold:,} is below what a compaction leaves behind: prefix "
            f"{run.prefix_tokens:,} + summary {run.summary_tokens:,} + {run.keep_recent} recent "
            f"steps x {run.step_tokens:,} = {compacted_size:,} tokens")
    prompts, shared, compacted, uncompacted = [], [], [], []
    history, summary, previous = 0, 0, 0
    for step in range(1, run.steps + 1):
        size = run.prefix_tokens + summary + run.step_tokens * history
        if size > threshold:
            uncompacted.append(size)
            summary, history = run.summary_tokens, run.keep_recent
            size = compacted_size
            shared.append(min(run.prefix_tokens, size))
            compacted.append(step)
        else:
            shared.append(previous)
        prompts.append(size)
        previous = size
        history += 1
    return Schedule(prompts, shared, compacted, uncompacted)


def default_threshold(run: Run) -> int:
    """Compact once the history has grown to twice what a compaction keeps."""
    return run.prefix_tokens + run.summary_tokens + 2 * run.step_tokens * run.keep_recent


# --------------------------------------------------------------------------- strategies

STRATEGIES = (
    "full history, no cache",
    "full history, append-only cache",
    "compact every step, prefix cached",
    "compact at threshold, cached between",
)


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


def simulate(strategy: str, run: Run = SEED_RUN, rules: CacheRules = EXACT,
             threshold: int | None = None, summary_calls: bool = False) -> list[Request]:
    """The billed requests of a run under one of `STRATEGIES`.

    With summary_calls=True each compaction also pays for the call that writes the summary
    (the study guide leaves it out). "compact every step" is the study guide's pessimistic
    case: the history is rewritten at every step past `keep_recent`, so only the fixed prefix
    is ever cached.
    """
    steps = range(1, run.steps + 1)
    if strategy == "full history, no cache":
        prompts = [full_history_prompt(s, run) for s in steps]
        return _agent_requests(prompts, [0] * run.steps, run, rules, caching=False)
    if strategy == "full history, append-only cache":
        prompts = [full_history_prompt(s, run) for s in steps]
        return _agent_requests(prompts, append_only_shared(prompts), run, rules, caching=True)
    if strategy == "compact every step, prefix cached":
        prompts = [compacted_prompt(s, run) for s in steps]
        requests = _agent_requests(prompts, prefix_only_shared(prompts, run.prefix_tokens), run,
                                   rules, caching=True)
        if summary_calls:
            for s in steps:
                if s - 1 - run.keep_recent > 0:  # a compacting step: summarise what it holds
                    requests.append(_summary_request(s, prompts[s - 2] + run.step_tokens,
                                                     prompts[s - 2], run, rules))
        return requests
    if strategy == "compact at threshold, cached between":
        schedule = compaction_schedule(run, default_threshold(run) if threshold is None
                                       else threshold)
        requests = _agent_requests(schedule.prompt_tokens, schedule.shared_tokens, run, rules,
                                   caching=True)
        if summary_calls:
            for step, size in zip(schedule.compacted_at, schedule.uncompacted):
                previous = schedule.prompt_tokens[step - 2] if step > 1 else 0
                requests.append(_summary_request(step, size, previous, run, rules))
        return requests
    raise ValueError(f"unknown strategy {strategy!r}; choose one of: {', '.join(STRATEGIES)}")


def strategy_table(run: Run = SEED_RUN, prices: Prices = SEED_PRICES, rules: CacheRules = EXACT,
                   threshold: int | None = None, summary_calls: bool = False) -> list[dict]:
    """One row per strategy: input tokens, cache hit rate, last request, compactions, USD."""
    rows = []
    for strategy in STRATEGIES:
        requests = simulate(strategy, run, rules, threshold, summary_calls)
        agent = [r for r in requests if r.kind == "agent"]
        prompt = sum(r.prompt_tokens for r in requests)
        cached = sum(r.cached_tokens for r in requests)
        rows.append({
            "strategy": strategy,
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
    def curve(strategy):
        return cumulative_cost_by_step(simulate(strategy, run, rules, threshold, summary_calls),
                                       prices, run.steps)

    return break_even_step(curve("full history, append-only cache"),
                           curve("compact at threshold, cached between"))


# --------------------------------------------------------------------------- provider table

PRICE_COLUMNS = ("provider", "model", "tier", "input_usd_per_mtok", "cached_input_usd_per_mtok",
                 "cache_write_usd_per_mtok", "output_usd_per_mtok", "checked_on", "source",
                 "read_from", "notes")


def load_price_table(path=PRICES_CSV) -> list[dict]:
    """Rows of the dated, sourced price table, each with a validated `prices` entry."""
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(line for line in handle if not line.startswith("#"))
        missing = [c for c in PRICE_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{path.name} lacks the column(s) {', '.join(missing)}")
        rows = []
        for n, row in enumerate(reader, start=2):
            label = f"{row['provider']} {row['model']}" + (f" ({row['tier']})" if row["tier"] else "")
            try:
                numbers = {k: float(row[k]) if row[k] else None for k in PRICE_COLUMNS[3:7]}
                prices = Prices(numbers["input_usd_per_mtok"], numbers["cached_input_usd_per_mtok"],
                                numbers["output_usd_per_mtok"] or 0.0,
                                numbers["cache_write_usd_per_mtok"], label)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path.name}, row for {label}: {exc}") from None
            if not row["checked_on"] or not row["source"]:
                raise ValueError(f"{path.name}, row for {label}: every price needs the date it "
                                 f"was checked and its source")
            rows.append({**row, "label": label, "prices": prices})
    return rows


def provider_presets(path=PRICES_CSV) -> dict[str, Prices]:
    """{label: Prices}, in the table's order; the study guide's prices come first."""
    presets = {SEED_PRICES.name: SEED_PRICES}
    presets.update((row["label"], row["prices"]) for row in load_price_table(path))
    return presets
