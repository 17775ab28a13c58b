"""Chapter 05: explicit caching (Anthropic's cache_control) against automatic caching.

What a write covers, where the breakpoints are, the minimum length, what expires, and the
price of each TTL.
"""
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solutions import costs as C

SONNET = "Anthropic claude-sonnet-5.5 (5-minute cache)"


def calls(*prompts, shared=None):
    """Agent calls one step apart; by default each shares all of the call before."""
    shared = shared or [0, *prompts[:-1]]
    return [C.Call(i + 1, p, s, 0) for i, (p, s) in enumerate(zip(prompts, shared))]


def billed(rules, run_calls, prefix=1_000):
    return [(r.prompt_tokens, r.cached_tokens, r.cache_write_tokens)
            for r in rules.bill(run_calls, prefix)]


# --------------------------------------------------------------------------- breakpoints

def test_a_moving_breakpoint_writes_each_new_step_once_and_reads_the_rest():
    rules = C.Breakpoints(at=("prefix", "end"), minimum=1024)
    assert billed(rules, calls(2_000, 3_000, 4_500)) == [
        (2_000, 0, 2_000), (3_000, 2_000, 1_000), (4_500, 3_000, 1_500)]


def test_only_the_prefix_marked_writes_the_prefix_once_and_history_is_plain_input():
    rules = C.Breakpoints(at=("prefix",), minimum=1024)
    assert billed(rules, calls(2_000, 3_000, 4_500), prefix=1_500) == [
        (2_000, 0, 1_500), (3_000, 1_500, 0), (4_500, 1_500, 0)]


def test_nothing_shorter_than_the_minimum_is_written_or_read():
    prefix_only = C.Breakpoints(at=("prefix",), minimum=1024)
    assert billed(prefix_only, calls(900, 1_800, 2_700), prefix=800) == [
        (900, 0, 0), (1_800, 0, 0), (2_700, 0, 0)]
    at_the_end = C.Breakpoints(at=("end",), minimum=1024)
    assert billed(at_the_end, calls(900, 1_800, 2_700), prefix=800) == [
        (900, 0, 0), (1_800, 0, 1_800), (2_700, 1_800, 900)]
    haiku_like = C.Breakpoints(minimum=2048)
    assert billed(haiku_like, calls(1_800, 2_700), prefix=800) == [(1_800, 0, 0), (2_700, 0, 2_700)]


def test_a_rewritten_history_reads_only_what_is_still_a_prefix():
    rules = C.Breakpoints()
    # call 3 keeps only the 1,200-token prefix of call 2 (a compaction)
    assert billed(rules, calls(3_000, 4_000, 2_500, shared=[0, 3_000, 1_200]), prefix=1_200) == [
        (3_000, 0, 3_000), (4_000, 3_000, 1_000), (2_500, 1_200, 1_300)]


def test_breakpoint_places_are_checked():
    for bad in [("middle",), ("end", "end"), ("prefix", "tools")]:
        with pytest.raises(ValueError, match="distinct places among prefix, end"):
            C.Breakpoints(at=bad)
    assert C.Breakpoints(at="end").at == ("end",)
    with pytest.raises(ValueError, match="ttl must be one of 5m, 1h"):
        C.Breakpoints(ttl="10m")
    with pytest.raises(ValueError, match="seconds_between_steps"):
        C.Breakpoints(seconds_between_steps=-1)
    with pytest.raises(ValueError, match="minimum"):
        C.Breakpoints(minimum=-5)


# --------------------------------------------------------------------------- what expires

@pytest.mark.parametrize("ttl, gap, hits", [("5m", 300, True), ("5m", 301, False),
                                            ("1h", 600, True), ("1h", 3_601, False)])
def test_an_entry_unused_for_longer_than_its_ttl_has_expired(ttl, gap, hits):
    rules = C.Breakpoints(ttl=ttl, seconds_between_steps=gap)
    second = billed(rules, calls(2_000, 3_000))[1]
    assert second == ((3_000, 2_000, 1_000) if hits else (3_000, 0, 3_000))


def test_a_read_refreshes_the_entry_so_a_steady_run_never_expires():
    rules = C.Breakpoints(ttl="5m", seconds_between_steps=200)  # 40 steps: over two hours
    requests = C.simulate("full_cached", C.SEED_RUN, rules)
    assert all(r.cached_tokens == p.prompt_tokens for p, r in zip(requests, requests[1:]))


def test_an_expired_cache_costs_more_than_no_cache_at_all():
    prices = C.provider_presets()[SONNET]
    expired = C.Breakpoints(seconds_between_steps=600)  # 10 minutes: past the 5-minute TTL
    rows = {r["key"]: r["usd"] for r in C.strategy_table(C.SEED_RUN, prices, expired)}
    none = rows[C.CostStrategy.FULL_NO_CACHE]
    assert rows[C.CostStrategy.FULL_CACHED] == pytest.approx(none * 1.25)  # all writes, no read
    one_hour = C.Breakpoints(ttl="1h", seconds_between_steps=600)
    kept = {r["key"]: r["usd"] for r in C.strategy_table(C.SEED_RUN, prices, one_hour)}
    assert kept[C.CostStrategy.FULL_CACHED] < none / 3


# --------------------------------------------------------------------------- prices

def test_a_one_hour_write_costs_twice_the_input_price():
    prices = C.provider_presets()[SONNET]
    assert C.Breakpoints().write_prices(prices) == prices
    one_hour = C.Breakpoints(ttl="1h").write_prices(prices)
    assert one_hour.cache_write == 2 * prices.input
    assert (one_hour.input, one_hour.cached_input, one_hour.output) == \
        (prices.input, prices.cached_input, prices.output)
    assert C.billed_prices(prices, C.OPENAI_RULES) == prices
    with pytest.raises(ValueError, match="per MILLION"):
        C.Breakpoints(ttl="1h").write_prices({"input": 3e-6, "cached_input": 3e-7})


def test_the_price_table_agrees_with_the_model_of_anthropic_prices():
    for row in C.load_price_table():
        if row["provider"] != "Anthropic":
            continue
        p = row["prices"]
        assert p.cached_input == pytest.approx(0.1 * p.input), row["label"]   # reads: a tenth
        assert p.cache_write == pytest.approx(1.25 * p.input), row["label"]   # 5-minute writes
        one_hour = float(re.search(r"1-hour cache writes cost ([\d.]+)", row["notes"]).group(1))
        assert one_hour == pytest.approx(C.ONE_HOUR_WRITE_FACTOR * p.input), row["label"]


# --------------------------------------------------------------------------- against automatic

@settings(max_examples=80, deadline=None)
@given(st.integers(0, 20_000), st.integers(1, 5_000), st.integers(1, 60), st.integers(0, 12),
       st.integers(0, 3_000), st.sampled_from(list(C.COST_STRATEGIES)), st.booleans())
def test_marking_prefix_and_end_without_limits_bills_like_automatic_caching(
        prefix, per_step, steps, keep, summary, strategy, summaries):
    run = C.Run(prefix, per_step, steps, keep, summary)
    unlimited = C.Breakpoints(at=("prefix", "end"), minimum=0, seconds_between_steps=0)
    assert C.simulate(strategy, run, unlimited, summary_calls=summaries) == \
        C.simulate(strategy, run, C.EXACT, summary_calls=summaries)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 20_000), st.integers(1, 5_000), st.integers(1, 60), st.integers(0, 12),
       st.sampled_from([("prefix",), ("end",), ("prefix", "end")]), st.integers(0, 4_096),
       st.sampled_from(["5m", "1h"]), st.integers(0, 4_000))
def test_explicit_caching_never_reads_or_writes_more_than_automatic(
        prefix, per_step, steps, keep, at, minimum, ttl, gap):
    run = C.Run(prefix, per_step, steps, keep)
    rules = C.Breakpoints(at, minimum, ttl, gap)
    for strategy in C.COST_STRATEGIES:
        explicit = C.simulate(strategy, run, rules, summary_calls=True)
        automatic = C.simulate(strategy, run, C.EXACT, summary_calls=True)
        for e, a in zip(explicit, automatic, strict=True):
            assert e.cached_tokens <= a.cached_tokens  # a read needs an entry written before
            assert e.cached_tokens + e.cache_write_tokens <= e.prompt_tokens
            if e.cache_write_tokens:  # a write ends at a breakpoint at least `minimum` long
                assert e.cached_tokens + e.cache_write_tokens >= minimum


def test_calls_come_in_order_with_each_summary_before_its_step():
    run = C.Run(steps=20)
    made = C.run_calls("compact_at_threshold", run, summary_calls=True)
    kinds = [(c.step, c.kind) for c in made]
    compacted = C.compaction_schedule(run, C.default_threshold(run)).compacted_at
    for step in compacted:
        assert kinds.index((step, "summary")) + 1 == kinds.index((step, "agent"))
    assert len(made) == run.steps + len(compacted)
    with pytest.raises(TypeError, match="CacheRules .* or Breakpoints"):
        C.simulate("full_cached", run, rules={"minimum": 1024})
