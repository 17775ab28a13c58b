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

The package, one concern per module (this module re-exports what is used through it):

    prices      Prices, the checks on prices and token counts, SEED_PRICES
    run         Run, Call, CacheRules (automatic caching), what each step sends (full history,
                compacted every step)
    breakpoints Breakpoints: explicit caching (Anthropic's cache_control), minimum and TTL
    billing     request_cost, step_costs, price_run, price_requests, cumulative_cost_by_step
    usage       usage_request, bill_usages, price_usages: the API's own usage records, priced
                (figures a provider does not report stay None and are priced by a stated rule)
    schedule    compaction_schedule: compacting only above a threshold
    simulation  CostStrategy, run_calls, simulate, billed_prices, strategy_table, break-even,
                seed_lab3
    table       load_price_table, provider_presets: the dated provider price table
"""
from __future__ import annotations

from solutions.costs.billing import (Request, cumulative_cost_by_step, price_requests, price_run,
                                     step_costs)
from solutions.costs.breakpoints import ANTHROPIC_RULES, ONE_HOUR_WRITE_FACTOR, Breakpoints
from solutions.costs.cache_friendly import cache_friendly_request, stable_tools
from solutions.costs.prices import SEED_PRICE_FIELDS, SEED_PRICES, Prices
from solutions.costs.run import (DEEPSEEK_RULES, EXACT, OPENAI_RULES, SEED_RUN, SEED_RUN_FIELDS,
                                 Call, CacheRules, Run, append_only_shared, compacted_prompt,
                                 full_history_prompt)
from solutions.costs.schedule import compaction_schedule, default_threshold
from solutions.costs.simulation import (COST_STRATEGIES, Caching, CostStrategy, billed_prices,
                                        break_even_step, compaction_break_even, format_seed_lab3,
                                        format_strategy_table, run_calls, seed_lab3, simulate,
                                        strategy_table)
from solutions.costs.table import PRICE_COLUMNS, load_price_table, provider_presets
from solutions.costs.usage import UsageNotReported, bill_usages, price_usages, usage_request
from solutions.costs.self_test import self_test

__all__ = [
    "ANTHROPIC_RULES", "Breakpoints", "COST_STRATEGIES", "CacheRules", "Caching", "Call",
    "CostStrategy", "DEEPSEEK_RULES", "EXACT", "ONE_HOUR_WRITE_FACTOR", "OPENAI_RULES",
    "PRICE_COLUMNS", "Prices", "Request", "Run", "SEED_PRICES", "SEED_PRICE_FIELDS", "SEED_RUN",
    "SEED_RUN_FIELDS", "UsageNotReported", "append_only_shared", "bill_usages", "billed_prices",
    "break_even_step", "cache_friendly_request", "compacted_prompt", "compaction_break_even",
    "compaction_schedule", "cumulative_cost_by_step", "default_threshold", "format_seed_lab3",
    "format_strategy_table", "full_history_prompt", "load_price_table", "price_requests",
    "price_run", "price_usages", "provider_presets", "run_calls", "seed_lab3", "self_test",
    "simulate", "stable_tools", "step_costs", "strategy_table", "usage_request",
]
