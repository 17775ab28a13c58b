"""Concurrent requests are answered in worker processes with the same replies, one shared
prompt cache, and the same refusals; the cheap test before the `again` pattern agrees with it."""
import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from course.llm.limits import AGAIN, asks_again
from course.llm.server import TeachingModel
from course.llm.validation import RequestError

LONG = "The build step {i} compiled src/module_{i}.c with exit code 0 in 12 ms.\n"


def body(salt: str, size: int = 300) -> dict:
    text = salt + "\n" + "".join(LONG.format(i=i) for i in range(size))
    return {"model": "teaching-model", "messages": [{"role": "user", "content": text}]}


def without_time(payload: dict) -> dict:
    return {k: v for k, v in payload.items() if k != "created"}


def test_an_answer_from_a_worker_equals_the_one_from_the_thread():
    model = TeachingModel(workers=1)
    model._busy = 1  # as if another request were being answered: this one goes to a worker
    request = body("worker")
    from_worker = model.complete_raw(request, json.dumps(request).encode())
    here = TeachingModel(workers=0).complete(request)
    assert without_time(from_worker) == without_time(here)
    # the worker's prompt went into this process's cache: the same prompt again is a hit
    again = model.complete(request)
    assert again["usage"]["prompt_tokens_details"]["cached_tokens"] == (
        again["usage"]["prompt_tokens"] // 128 * 128)


def test_a_refusal_from_a_worker_is_the_same_refusal():
    model = TeachingModel(workers=1)
    model._busy = 1
    broken = {"model": "m", "messages": [{"role": "tool", "tool_call_id": "x", "content": "r"}]}
    with pytest.raises(RequestError) as there:
        model.complete_raw(broken, json.dumps(broken).encode())
    with pytest.raises(RequestError) as here:
        TeachingModel(workers=0).complete(broken)
    assert there.value.body() == here.value.body() and there.value.status == here.value.status


def test_eight_concurrent_clients_share_one_cache():
    requests = [body(f"client {n}") for n in range(8)]
    with course.llm.serve() as server:
        client = server.client()

        def send(request):
            return client.chat.completions.create(**request)

        with ThreadPoolExecutor(8) as threads:
            first = list(threads.map(send, requests))
            second = list(threads.map(send, requests))
    for a, b in zip(first, second):
        assert a.choices[0].message.content == b.choices[0].message.content
        assert a.usage.prompt_tokens_details.cached_tokens == 0  # every prompt new
        assert b.usage.prompt_tokens_details.cached_tokens == b.usage.prompt_tokens // 128 * 128


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(st.sampled_from(list("agin onemrt AGIN.İı")), max_size=40))
def test_the_cheap_again_test_agrees_with_the_pattern(text):
    assert asks_again(text) is (AGAIN.search(text) is not None)
