"""Chapter 05: the cost calculator, the compaction schedule, the price table and the widget logic."""
import re
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_support.widgets import costs as widget
from solutions import costs as C

ANTHROPIC = "Anthropic claude-opus-4.6 (5-minute cache)"


# --------------------------------------------------------------------------- the seed's lab 3

def test_seed_lab3_token_totals():
    result = C.seed_lab3()
    assert result["full_total_input"] == 1_290_000
    assert result["compacted_total_input"] == 570_800
    assert result["full_last_step"] == 61_500
    assert result["compacted_last_step"] == 15_800


def test_seed_lab3_dollars_as_the_study_guide_prints_them():
    result = C.seed_lab3()
    assert f"{result['full_no_cache_usd']:.4f}" == "0.1935"
    assert f"{result['full_append_only_usd']:.4f}" == "0.0129"
    assert f"{result['compacted_prefix_only_usd']:.4f}" == "0.0684"
    text = C.format_seed_lab3(result)
    for figure in ("1,290,000", "570,800", "61,500", "15,800", "$0.1935", "$0.0129", "$0.0684"):
        assert figure in text


def test_strategy_table_reproduces_the_seed_for_the_seed_strategies():
    rows = {r["strategy"]: r for r in C.strategy_table()}
    seed = C.seed_lab3()
    assert rows["full history, no cache"]["usd"] == pytest.approx(seed["full_no_cache_usd"])
    assert rows["full history, append-only cache"]["usd"] == pytest.approx(seed["full_append_only_usd"])
    assert rows["compact every step, prefix cached"]["usd"] == \
        pytest.approx(seed["compacted_prefix_only_usd"])
    # compacting only at a threshold keeps the cache between compactions: far cheaper
    assert rows["compact at threshold, cached between"]["usd"] < \
        rows["compact every step, prefix cached"]["usd"] / 2


# --------------------------------------------------------------------------- validation

@pytest.mark.parametrize("prompt, cached, words", [
    ([100, 200], [150, 0], "never exceed"),
    ([100, -5], [0, 0], "cannot be negative"),
    ([100, 200], [0], "1 entries but there are 2 steps"),
    ([100, 2.5], [0, 0], "whole number"),
    ("100", [0], "list with one count per step"),
])
def test_impossible_counts_are_refused_with_the_step(prompt, cached, words):
    with pytest.raises((ValueError, TypeError)) as info:
        C.price_run(prompt, cached, C.SEED_PRICES)
    assert words in str(info.value)


def test_cached_above_prompt_names_the_step():
    with pytest.raises(ValueError, match="step 3: 900 cached tokens but the prompt has only 800"):
        C.price_run([500, 600, 800], [0, 500, 900], C.SEED_PRICES)


def test_cache_writes_cannot_exceed_the_uncached_part():
    with pytest.raises(ValueError, match="cache-write"):
        C.price_run([1000], [800], C.SEED_PRICES, cache_write_tokens=[300])


def test_per_token_prices_are_caught_and_per_token_constructor_converts():
    with pytest.raises(ValueError, match="per MILLION"):
        C.Prices(input=0.15e-6, cached_input=0.003e-6)
    with pytest.raises(ValueError, match="per MILLION"):
        C.Prices(input=0.15, cached_input=0.003, output=6e-7)
    converted = C.Prices.per_token(0.15e-6, 0.003e-6)
    assert converted.input == pytest.approx(0.15) and converted.cached_input == pytest.approx(0.003)


@pytest.mark.parametrize("kwargs, error, words", [
    ({"input": 0.003, "cached_input": 0.15}, ValueError, "swapped"),
    ({"input": -1, "cached_input": 0}, ValueError, "0 or more"),
    ({"input": float("nan"), "cached_input": 0}, ValueError, "finite"),
    ({"input": "0.15", "cached_input": 0.003}, TypeError, "number"),
])
def test_bad_prices_are_refused(kwargs, error, words):
    with pytest.raises(error, match=words):
        C.Prices(**kwargs)


def test_prices_as_a_plain_dict_are_validated_like_prices_objects():
    as_dict = C.price_run([3000, 4500], [0, 3000], {"input": 0.15, "cached_input": 0.003})
    assert as_dict == C.price_run([3000, 4500], [0, 3000], C.SEED_PRICES)
    with pytest.raises(ValueError, match="per MILLION"):
        C.price_run([100], [0], {"input": 0.15e-6, "cached_input": 0.003e-6})
    with pytest.raises(ValueError, match="need cached_input"):
        C.price_run([100], [0], {"input": 0.15})
    with pytest.raises(ValueError, match="unknown price field.*'miss'"):
        C.price_run([100], [0], {"miss": 0.15, "input": 0.15, "cached_input": 0.003})
    with pytest.raises(TypeError, match="Prices object or a dict"):
        C.price_run([100], [0], 0.15)


# --------------------------------------------------------------------------- invariants

STEPS = st.lists(st.tuples(st.integers(0, 200_000), st.integers(0, 200_000),
                           st.integers(0, 5_000)), min_size=1, max_size=30)
PRICES = st.builds(lambda miss, hit_share, out, premium: C.Prices(
    miss, miss * hit_share, out, miss * premium),
    # real per-million prices: nothing between 0 and 0.001 (that range means per-token figures)
    st.floats(0.01, 20), st.one_of(st.just(0.0), st.floats(0.1, 1)),
    st.one_of(st.just(0.0), st.floats(0.01, 80)), st.floats(1, 2))


def _split(steps):
    prompt = [max(p, c) for p, c, _ in steps]
    cached = [min(p, c) for p, c, _ in steps]
    output = [o for _, _, o in steps]
    return prompt, cached, output


@settings(max_examples=150, deadline=None)
@given(STEPS, PRICES)
def test_run_cost_is_the_sum_of_step_costs_and_cumulative_cost_never_falls(steps, prices):
    prompt, cached, output = _split(steps)
    per_step = C.step_costs(prompt, cached, prices, output)
    assert all(c >= 0 for c in per_step)
    assert C.price_run(prompt, cached, prices, output) == pytest.approx(sum(per_step))
    requests = [C.Request(i + 1, p, c, o) for i, (p, c, o) in enumerate(zip(prompt, cached, output))]
    curve = C.cumulative_cost_by_step(requests, prices, len(requests))
    assert all(b >= a for a, b in zip(curve, curve[1:]))


@settings(max_examples=100, deadline=None)
@given(STEPS, PRICES, st.integers(0, 29), st.integers(1, 10_000))
def test_more_prompt_tokens_never_cost_less(steps, prices, index, extra):
    prompt, cached, output = _split(steps)
    index %= len(prompt)
    bigger = list(prompt)
    bigger[index] += extra
    assert C.price_run(bigger, cached, prices, output) >= C.price_run(prompt, cached, prices, output)


@settings(max_examples=100, deadline=None)
@given(STEPS, PRICES, st.integers(0, 29), st.integers(1, 10_000))
def test_more_cached_tokens_never_cost_more(steps, prices, index, extra):
    prompt, cached, output = _split(steps)
    index %= len(prompt)
    more = list(cached)
    more[index] = min(prompt[index], cached[index] + extra)
    assert C.price_run(prompt, more, prices, output) <= C.price_run(prompt, cached, prices, output)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 20_000), st.integers(1, 5_000), st.integers(1, 80), st.integers(0, 20),
       st.integers(0, 3_000), st.integers(0, 200_000))
def test_threshold_schedule_invariants(prefix, per_step, steps, keep, summary, extra):
    run = C.Run(prefix, per_step, steps, keep, summary)
    threshold = prefix + summary + keep * per_step + extra
    schedule = C.compaction_schedule(run, threshold)
    assert len(schedule.prompt_tokens) == steps == len(schedule.shared_tokens)
    for i, (prompt, shared) in enumerate(zip(schedule.prompt_tokens, schedule.shared_tokens)):
        step = i + 1
        assert prompt <= max(threshold, C.full_history_prompt(1, run))
        assert 0 <= shared <= prompt
        if step in schedule.compacted_at:
            assert shared == min(prefix, prompt)
        elif step > 1:  # append-only between compactions: all of the previous request is shared
            assert shared == schedule.prompt_tokens[i - 1]
    assert all(u > threshold for u in schedule.uncompacted)


def test_threshold_at_the_compacted_size_is_the_seeds_compaction():
    run = C.SEED_RUN
    compacted = run.prefix_tokens + run.summary_tokens + run.keep_recent * run.step_tokens
    schedule = C.compaction_schedule(run, compacted)
    assert schedule.prompt_tokens == [C.compacted_prompt(s) for s in range(1, run.steps + 1)]
    assert schedule.compacted_at == list(range(run.keep_recent + 2, run.steps + 1))


def test_threshold_above_the_largest_request_never_compacts():
    run = C.SEED_RUN
    schedule = C.compaction_schedule(run, C.full_history_prompt(run.steps, run))
    full = [C.full_history_prompt(s) for s in range(1, run.steps + 1)]
    assert schedule.prompt_tokens == full and not schedule.compacted_at
    assert schedule.shared_tokens == C.append_only_shared(full)


def test_schedule_takes_the_run_as_a_plain_dict():
    fields = {"prefix_tokens": 3000, "step_tokens": 1500, "steps": 40, "keep_recent": 8,
              "summary_tokens": 800}
    assert C.compaction_schedule(fields, 27_800) == C.compaction_schedule(C.SEED_RUN, 27_800)
    with pytest.raises(ValueError, match="unknown run field.*'prefix'"):
        C.compaction_schedule({"prefix": 3000}, 27_800)
    with pytest.raises(TypeError, match="Run or a dict"):
        C.compaction_schedule([3000, 1500], 27_800)


def test_threshold_below_what_compaction_leaves_is_refused():
    with pytest.raises(ValueError, match="15,800"):
        C.compaction_schedule(C.SEED_RUN, 15_000)


@pytest.mark.parametrize("kwargs", [{"steps": 0}, {"step_tokens": -1}, {"keep_recent": 1.5}])
def test_bad_run_shapes_are_refused(kwargs):
    with pytest.raises((ValueError, TypeError)):
        C.Run(**kwargs)


# --------------------------------------------------------------------------- beyond the seed

def test_cache_rules_round_down_to_blocks_and_ignore_short_prefixes():
    assert C.OPENAI_RULES.cached(1023) == 0
    assert C.OPENAI_RULES.cached(1024) == 1024
    assert C.OPENAI_RULES.cached(1300) == 1280
    assert C.EXACT.cached(1300) == 1300
    with pytest.raises(ValueError):
        C.CacheRules(block=0)


def test_deepseek_reports_64_token_units_from_64_tokens_on():
    assert C.DEEPSEEK_RULES.cached(63) == 0
    assert C.DEEPSEEK_RULES.cached(700) == 640  # OpenAI's rules report nothing below 1,024
    assert C.OPENAI_RULES.cached(700) == 0
    assert C.DEEPSEEK_RULES.cached(1279) == 1216 > C.OPENAI_RULES.cached(1279) == 1152


def test_write_premium_raises_cached_strategies_but_not_the_uncached_one():
    plain = C.Prices(5.0, 0.5, 25.0)
    premium = C.Prices(5.0, 0.5, 25.0, cache_write=6.25)
    cheap = {r["strategy"]: r["usd"] for r in C.strategy_table(prices=plain)}
    dear = {r["strategy"]: r["usd"] for r in C.strategy_table(prices=premium)}
    assert dear["full history, no cache"] == pytest.approx(cheap["full history, no cache"])
    for strategy in C.COST_STRATEGIES[1:]:
        assert dear[strategy.label] > cheap[strategy.label]


def test_output_tokens_and_summary_calls_add_to_the_bill():
    prices = C.Prices(1.0, 0.1, 6.0)
    silent = C.strategy_table(C.Run(output_tokens=0), prices)
    talkative = C.strategy_table(C.Run(output_tokens=400), prices)
    assert all(t["usd"] > s["usd"] for s, t in zip(silent, talkative))
    without = {r["strategy"]: r for r in C.strategy_table(prices=prices)}
    with_calls = {r["strategy"]: r for r in C.strategy_table(prices=prices, summary_calls=True)}
    name = "compact at threshold, cached between"
    compactions = len(C.compaction_schedule(C.SEED_RUN, C.default_threshold(C.SEED_RUN)).compacted_at)
    assert with_calls[name]["calls"] == without[name]["calls"] + compactions
    assert with_calls[name]["usd"] > without[name]["usd"]


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="choose one of"):
        C.simulate("cache everything forever")


def test_strategies_are_named_apart_from_their_labels():
    # The simulation is chosen by the member (or its name), never by the text a table shows.
    assert C.simulate("full_cached") == C.simulate(C.CostStrategy.FULL_CACHED)
    with pytest.raises(ValueError, match="choose one of"):
        C.simulate(C.CostStrategy.FULL_CACHED.label)
    rows = C.strategy_table()
    assert [r["key"] for r in rows] == list(C.COST_STRATEGIES)
    assert [r["strategy"] for r in rows] == [s.label for s in C.COST_STRATEGIES]


def test_the_seed_figures_are_one_source():
    assert C.Run() == C.SEED_RUN == C.Run(**C.SEED_RUN_FIELDS)
    assert (C.SEED_PRICES.input, C.SEED_PRICES.cached_input) == \
        (C.SEED_PRICE_FIELDS["input"], C.SEED_PRICE_FIELDS["cached_input"])


def test_break_even_step_needs_the_candidate_to_stay_cheaper():
    assert C.break_even_step([1, 2, 3, 4], [1, 2.5, 2.9, 3.5]) == 3
    assert C.break_even_step([1, 2, 3], [1, 2, 3]) is None        # never strictly cheaper
    assert C.break_even_step([1, 2, 3], [0.5, 1, 3.5]) is None    # dearer at the end
    with pytest.raises(ValueError):
        C.break_even_step([1, 2], [1])


def test_compaction_pays_only_on_a_long_enough_run():
    prices = C.provider_presets()[ANTHROPIC]
    assert C.compaction_break_even(C.SEED_RUN, prices) is None
    long_run = C.Run(steps=120)
    step = C.compaction_break_even(long_run, prices)
    assert step is not None
    curves = widget.cumulative_curves(long_run, prices)
    full, compact = curves[widget.BASELINE], curves[widget.CANDIDATE]
    assert all(compact[i] < full[i] for i in range(step - 1, long_run.steps))
    assert compact[step - 2] >= full[step - 2]


# --------------------------------------------------------------------------- recorded usage

def test_usage_records_in_openai_and_deepseek_shapes():
    openai_style = {"prompt_tokens": 5000, "completion_tokens": 120,
                    "prompt_tokens_details": {"cached_tokens": 4096}}
    deepseek_style = {"prompt_tokens": 5000, "completion_tokens": 120,
                      "prompt_cache_hit_tokens": 4096, "prompt_cache_miss_tokens": 904}
    prices = C.Prices(0.15, 0.003, 0.6)
    expected = (4096 * 0.003 + 904 * 0.15 + 120 * 0.6) / 1e6
    assert C.price_usages([openai_style], prices) == pytest.approx(expected)
    assert C.price_usages([deepseek_style], prices) == pytest.approx(expected)
    with pytest.raises(ValueError, match="step 1"):
        C.price_usages([{"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 20}}],
                       prices)
    with pytest.raises(ValueError, match="no prompt_tokens"):
        C.usage_request({"completion_tokens": 3})


def test_a_run_priced_from_the_teaching_models_own_usage(client):
    from lesson_support.cache_experiment import run_strategy

    records = run_strategy(client, "append-only", steps=6)
    usages = [{"prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens,
               "prompt_tokens_details": {"cached_tokens": r.cached_tokens}} for r in records]
    prices = C.Prices(1.0, 0.1, 6.0)
    with_cache = C.price_usages(usages, prices)
    assert C.price_usages(records, prices) == pytest.approx(with_cache)  # flat records too
    assert with_cache == pytest.approx(C.price_run(
        [r.prompt_tokens for r in records], [r.cached_tokens for r in records], prices,
        [r.completion_tokens for r in records]))
    no_cache = C.price_run([r.prompt_tokens for r in records], [0] * len(records), prices,
                           [r.completion_tokens for r in records])
    assert sum(r.cached_tokens for r in records) > 0 and with_cache < no_cache


def test_sdk_usage_objects_are_read():
    from openai.types import CompletionUsage

    usage = CompletionUsage(prompt_tokens=2000, completion_tokens=10, total_tokens=2010,
                            prompt_tokens_details={"cached_tokens": 1920})
    # OpenAI reports no cache writes here: None ("not reported"), never 0
    assert C.usage_request(usage, 4) == C.Request(4, 2000, 1920, 10, None)


# --------------------------------------------------------------------------- price table

def test_price_table_rows_are_dated_and_sourced():
    rows = C.load_price_table()
    assert len(rows) >= 5
    for row in rows:
        checked = date.fromisoformat(row["checked_on"])
        assert date(2024, 1, 1) <= checked <= date(2026, 12, 31)
        assert re.match(r"https://", row["source"]), row["label"]
        assert isinstance(row["prices"], C.Prices)
    providers = {row["provider"] for row in rows}
    assert {"DeepSeek", "OpenAI", "Anthropic"} <= providers


def test_presets_start_with_the_seed_and_match_the_seed_prices_for_deepseek():
    presets = C.provider_presets()
    assert next(iter(presets)) == C.SEED_PRICES.name
    flash = presets["DeepSeek deepseek-flash (off-peak)"]
    assert (flash.input, flash.cached_input) == (C.SEED_PRICES.input, C.SEED_PRICES.cached_input)


HEADER = ",".join(C.PRICE_COLUMNS)


@pytest.mark.parametrize("row, words", [
    ("X,m,,0.15,0.003,,0.6,,https://example.com,,", "date it was checked"),
    ("X,m,,0.00000015,0.000000003,,0.6,2026-01-01,https://example.com,,", "per MILLION"),
    ("X,m,,abc,0.003,,0.6,2026-01-01,https://example.com,,", "X m"),
])
def test_bad_price_rows_are_refused(tmp_path, row, words):
    path = tmp_path / "prices.csv"
    path.write_text(HEADER + "\n" + row + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=words):
        C.load_price_table(path)


def test_price_table_without_a_column_is_refused(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text("provider,model\nX,m\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lacks the column"):
        C.load_price_table(path)
