"""The course's usage readers on the three provider shapes of tests/providers/proxy.py.

The status-bar replay (lesson 08), the skills lesson's `usage_of` (lesson 09), the production
compaction measurement (lesson 11) and the cost pricing (solutions.costs) all read usage through
course.usage.read_usage: Ollama's missing cache figure stays None and is reported as not
reported, DeepSeek's hit tokens and OpenAI's cached_tokens are read as they are.
"""
import warnings

import pytest

import course.llm
import solutions.costs as C
from course.usage import NOT_REPORTED
from lesson_support.production_compaction import Measurement, config_table
from lesson_support.skills import usage_of
from lesson_support.status_bar import load_run, replay_usage
from tests.providers.proxy import SHAPES, ProviderProxy

REQUESTS = 5  # enough for the teaching model's cache to hit (from request 4 on)
PRICES = C.Prices(1.0, 0.1, 6.0)


@pytest.fixture(scope="module")
def run():
    return load_run()


@pytest.fixture(scope="module")
def teaching(run):
    """The replay straight on a teaching model: the figures every proxy started from."""
    with course.llm.serve() as server:
        return replay_usage(run, server.client(), course.llm.model_name(), "end", "replace",
                            requests=REQUESTS)


@pytest.fixture(scope="module", params=SHAPES)
def replayed(request, run):
    """(shape, records of the status-bar replay through that shape's proxy)."""
    with ProviderProxy(request.param) as proxy:
        records = replay_usage(run, proxy.client(), "m", "end", "replace", requests=REQUESTS)
        assert proxy.requests == REQUESTS, "the replay did not reach the provider"
    return request.param, records


def _price_run(records, cached):
    return C.price_run([r["prompt_tokens"] for r in records], cached, PRICES,
                       [r["completion_tokens"] for r in records])


def test_the_replay_reads_each_shapes_figures(replayed, teaching):
    shape, records = replayed
    assert [r["prompt_tokens"] for r in records] == [r["prompt_tokens"] for r in teaching]
    assert [r["completion_tokens"] for r in records] == [r["completion_tokens"] for r in teaching]
    cached = [r["cached_tokens"] for r in records]
    if shape == "ollama":
        assert cached == [None] * REQUESTS, "Ollama reports no cache figure: None, not 0"
    elif shape == "deepseek":  # prompt_cache_hit_tokens, in 64-token units
        assert any(cached) and all(c % 64 == 0 and c <= r["prompt_tokens"]
                                   for c, r in zip(cached, records))
    else:  # prompt_tokens_details.cached_tokens, exactly the teaching model's
        assert cached == [r["cached_tokens"] for r in teaching] and any(cached)


def test_the_replay_is_priced_from_the_figures_that_were_reported(replayed):
    shape, records = replayed
    bill = C.bill_usages(records, PRICES)
    cached = [r["cached_tokens"] for r in records]
    if shape == "ollama":
        # priced as uncached, and said so: in the bill and by price_usages' warning
        assert bill.usd == pytest.approx(_price_run(records, [0] * REQUESTS))
        assert bill.not_reported["cached_tokens"] == tuple(range(1, REQUESTS + 1))
        assert not bill.complete and NOT_REPORTED in str(bill)
        with pytest.warns(C.UsageNotReported, match="cached_tokens not reported"):
            assert C.price_usages(records, PRICES) == bill.usd
    else:
        assert bill.usd == pytest.approx(_price_run(records, cached))
        assert bill.usd < _price_run(records, [0] * REQUESTS)  # the hits lowered the bill
        assert bill.complete and "cached_tokens" not in bill.not_reported
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert C.price_usages(records, PRICES) == bill.usd
    # no shape reports cache writes: listed as not reported, priced with no write premium
    assert bill.not_reported["cache_write_tokens"] == tuple(range(1, REQUESTS + 1))
    assert all(r.cache_write_tokens is None for r in bill.requests)


@pytest.mark.parametrize("shape", SHAPES)
def test_sdk_usage_objects_of_each_shape(shape, run):
    """usage_of (lesson 09) and the production-compaction measurement (lesson 11) read the SDK's
    usage objects of every shape; none raises AttributeError on a missing prompt_tokens_details."""
    with ProviderProxy(shape) as proxy:
        client = proxy.client()
        messages = run.history(REQUESTS)
        completions = [client.chat.completions.create(model="m", messages=messages,
                                                      tools=run.tools) for _ in range(2)]
    read = [usage_of(c) for c in completions]
    assert read[0][0] == read[1][0] > 0
    m = Measurement("one config", (), sizes=[read[0][0]], usages=[c.usage for c in completions])
    assert m.sent_prompt == 2 * read[0][0]
    if shape == "ollama":
        assert [cached for _, cached in read] == [None, None]
        assert m.sent_cached is None and m.hit_rate is None
        with pytest.warns(C.UsageNotReported):  # its cost column prices them as uncached
            table = config_table({"one config": m})
        assert " n/r " in table and f"cached tokens {NOT_REPORTED}" in table
    else:  # the second, identical request reads its prefix from the cache
        assert read[1][1] > 0 and m.sent_cached == read[0][1] + read[1][1]
        assert m.hit_rate == pytest.approx(m.sent_cached / m.sent_prompt)
