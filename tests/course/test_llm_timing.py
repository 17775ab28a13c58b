"""Simulated serving time (course/llm/timing.py): every reply says how long a real deployment
would have taken, from its token counts; a cached prefix starts in a fraction of the time; the
textbook's incident comes out at a customer-service prompt's size; no real provider's shape
carries the field."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

import course.llm
from course.llm.timing import (CACHED_TOKENS_PER_S, DECODE_TOKENS_PER_S, OVERHEAD_S,
                               PREFILL_TOKENS_PER_S, simulated_timing)

MODEL = course.llm.MODEL_NAME
SYSTEM = "You are the airline's customer-service agent. Follow the booking rules below.\n" + \
    "".join(f"Rule {k}: a booking change of type {k} needs the customer's confirmation first.\n" for k in range(900))


@pytest.fixture(scope="module")
def client():
    with course.llm.serve() as server:
        yield server.client()


def timing(completion) -> dict:
    return completion.model_extra["teaching_timing"]


def ask(client, system, question="Can I change my flight to Friday?"):
    return client.chat.completions.create(model=MODEL, messages=[
        {"role": "system", "content": system}, {"role": "user", "content": question}])


def test_a_cached_prefix_starts_in_a_fraction_of_the_time(client):
    first, again = ask(client, SYSTEM), ask(client, SYSTEM)
    assert 15_000 < first.usage.prompt_tokens < 25_000
    assert first.usage.prompt_tokens_details.cached_tokens == 0 < again.usage.prompt_tokens_details.cached_tokens
    miss, hit = timing(first)["time_to_first_token_s"], timing(again)["time_to_first_token_s"]
    assert 3 <= miss <= 5 and hit <= 0.6, (miss, hit)  # the textbook's incident: 0.5 s -> 3-5 s


def test_a_changing_line_at_the_top_makes_every_request_a_miss(client):
    times = [timing(ask(client, f"Current time: 2026-03-14 09:{m:02d}\n" + SYSTEM))["time_to_first_token_s"]
             for m in range(3)]
    assert all(t >= 3 for t in times)


def test_the_streamed_reply_carries_the_same_timing(client):
    whole = ask(client, SYSTEM, "And to Saturday?")
    stream = client.chat.completions.create(model=MODEL, stream=True, messages=[
        {"role": "system", "content": SYSTEM}, {"role": "user", "content": "And to Saturday?"}])
    last = [chunk for chunk in stream if chunk.choices and chunk.choices[0].finish_reason][-1]
    assert last.model_extra["teaching_timing"]["decode_s"] == timing(whole)["decode_s"]


def test_the_responses_api_reports_it_too(client):
    fresh = "Answer in one sentence.\n" + SYSTEM  # a prefix no earlier request cached
    first = client.responses.create(model=MODEL, instructions=fresh, input="Can I change my flight?")
    again = client.responses.create(model=MODEL, instructions=fresh, input="Can I change my flight?")
    assert first.model_extra["teaching_timing"]["time_to_first_token_s"] > 3 > 1 > \
        again.model_extra["teaching_timing"]["time_to_first_token_s"]


@given(st.integers(0, 200_000), st.integers(0, 200_000), st.integers(0, 5_000))
def test_the_timing_is_the_documented_formula(prompt, cached, completion):
    cached = min(cached, prompt)
    got = simulated_timing(prompt, cached, completion)
    prefill = (prompt - cached) / PREFILL_TOKENS_PER_S + cached / CACHED_TOKENS_PER_S
    assert got["prefill_s"] == pytest.approx(prefill, abs=1e-3)
    assert got["time_to_first_token_s"] == pytest.approx(OVERHEAD_S + prefill + 1 / DECODE_TOKENS_PER_S, abs=1e-3)
    assert got["total_s"] >= got["time_to_first_token_s"] - 1e-3
    assert simulated_timing(prompt, 0, completion)["prefill_s"] >= got["prefill_s"], "a hit is never slower"


def test_no_provider_shape_carries_it():
    from tests.providers.proxy import ProviderProxy
    for shape in ("openai", "deepseek"):
        with ProviderProxy(shape) as proxy:
            reply = proxy.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            assert "teaching_timing" not in (reply.model_extra or {})
