"""The teaching model's server never answers 500 and never HTML: whatever arrives, a JSON reply
(2xx) or a JSON refusal in the OpenAI error shape (4xx)."""
import http.client
import json
import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm

CHAT = "/v1/chat/completions"


@pytest.fixture(scope="module")
def live():
    with course.llm.serve() as handle:
        yield handle


def send(server, method: str, path: str, body: bytes | None = None, headers=None):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type"), response.read()
    finally:
        conn.close()


def assert_json_answer(status, content_type, data, method="POST"):
    assert 200 <= status < 300 or 400 <= status < 500, (status, data[:300])
    assert content_type == "application/json", (status, content_type, data[:300])
    if method == "HEAD":
        return
    payload = json.loads(data)
    if status >= 400:
        error = payload["error"]
        assert isinstance(error["message"], str) and error["message"].strip()
        assert set(error) == {"message", "type", "param", "code"}
    else:
        assert "choices" in payload or "data" in payload or payload.get("status") == "ok"


# --- the cases issue 25 item 6 found, each once -------------------------------------------

@pytest.mark.parametrize("where", [
    '{"model": "m", "messages": [{"role": "user", "content": "\\ud800"}]}',
    '{"model": "m\\udfff", "messages": [{"role": "user", "content": "hi"}]}',
    '{"model": "m", "messages": [{"role": "user", "content": "hi", "\\ud800": 1}]}',
    '{"model": "m", "messages": [{"role": "user", "content": "a\\ude00\\ud83d"}]}',  # reversed pair
])
def test_a_lone_surrogate_escape_anywhere_is_a_400(live, where):
    status, kind, data = send(live, "POST", CHAT, where.encode())
    assert status == 400 and "lone surrogate" in json.loads(data)["error"]["message"]
    assert_json_answer(status, kind, data)


def test_a_surrogate_pair_is_one_character_and_accepted(live):
    body = b'{"model": "m", "messages": [{"role": "user", "content": "smile \\ud83d\\ude00"}]}'
    status, kind, data = send(live, "POST", CHAT, body)
    assert status == 200 and "\U0001F600" in json.loads(data)["choices"][0]["message"]["content"]


@pytest.mark.parametrize("method", ["PUT", "DELETE", "OPTIONS", "PATCH", "HEAD", "BREW"])
def test_other_methods_are_a_405_in_json(live, method):
    status, kind, data = send(live, method, CHAT, b"{}")
    assert status == 405
    assert_json_answer(status, kind, data, method)


def test_an_over_long_url_is_a_414_in_json(live):
    status, kind, data = send(live, "GET", "/v1/" + "a" * 70_000)
    assert status == 414
    assert_json_answer(status, kind, data)


def test_too_many_or_too_long_headers_are_a_431_in_json(live):
    for headers in ({f"X-H{i}": "1" for i in range(150)}, {"X-Long": "b" * 70_000}):
        status, kind, data = send(live, "GET", "/v1/models", headers=headers)
        assert status == 431
        assert_json_answer(status, kind, data)


def test_a_broken_request_line_is_answered_in_json(live):
    with socket.create_connection((live.host, live.port), timeout=60) as sock:
        sock.sendall(b"GET /v1/models HTTP/1.1 extra\r\n\r\n")
        data = sock.makefile("rb").read()
    # http.server cannot tell the version from such a line and answers as HTTP/0.9 does, the
    # body alone: JSON, no longer an HTML page
    assert json.loads(data)["error"]["code"] == "invalid_request"


# --- properties: generated bodies and bytes ------------------------------------------------

lone_surrogates = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\ude00\ud83d"])
text = st.text(max_size=12) | st.tuples(st.text(max_size=6), lone_surrogates,
                                        st.text(max_size=6)).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=16)
roles = st.sampled_from(["system", "user", "assistant", "tool", "developer"]) | json_values
calls = st.lists(st.fixed_dictionaries(
    {"id": st.sampled_from(["a", "b"]) | json_values},
    optional={"type": st.just("function") | json_values,
              "function": st.fixed_dictionaries({}, optional={
                  "name": st.sampled_from(["f", "g"]) | json_values,
                  "arguments": st.just("{}") | json_values})}), max_size=3)
messages = st.lists(st.fixed_dictionaries({"role": roles}, optional={
    "content": text | json_values, "tool_call_id": st.sampled_from(["a", "b"]) | json_values,
    "tool_calls": calls | json_values, "name": text | json_values,
    # a reasoning model's field (course/llm/reasoning.py): text, null or junk, on any role
    "reasoning_content": text | json_values}), max_size=5)
MODEL_NAMES = st.sampled_from(["teaching-model", "teaching-model-8k", "m", "teaching-reasoner-strip",
                               "teaching-reasoner-pass-back", "teaching-reasoner-since-last-user"])
# context editing (course/llm/context_editing.py): well-formed, half-formed and junk options
counts = st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["input_tokens", "tool_uses"]) | json_values,
    "value": st.integers(-3, 200_000) | json_values})
context_management = st.fixed_dictionaries({}, optional={"edits": st.lists(
    st.fixed_dictionaries({}, optional={
        "type": st.just("clear_tool_uses_20250919") | json_values,
        "trigger": counts | json_values, "keep": counts | json_values,
        "clear_at_least": counts | json_values,
        "exclude_tools": st.lists(st.sampled_from(["f", "g"]) | json_values, max_size=3) | json_values,
        "clear_tool_inputs": st.booleans() | json_values}) | json_values, max_size=3) | json_values})
# sampling (course/llm/sampling.py): in range, out of range, of the wrong type
temperatures = st.floats(-1, 3) | st.integers(-2, 3) | st.just(float("inf")) | json_values
seeds = st.integers(-2 ** 64, 2 ** 64) | st.floats(-10, 10) | json_values
top_ps = st.floats(-0.5, 1.5) | st.just(float("nan")) | json_values
bodies = st.fixed_dictionaries({}, optional={
    "model": MODEL_NAMES | json_values,
    "messages": messages | json_values, "tools": json_values, "tool_choice": json_values,
    "parallel_tool_calls": json_values, "temperature": temperatures, "seed": seeds,
    "top_p": top_ps,
    "max_tokens": st.integers(-2, 10_000) | json_values, "max_completion_tokens": json_values,
    "n": json_values, "stream": json_values,
    "context_management": context_management | json_values}) | json_values
SHOP_TOOLS = [{"type": "function", "function": {
    "name": name, "description": about, "parameters": {"type": "object", "properties": {
        "order_id": {"type": "integer"}, "unit": {"type": "string", "enum": ["eur", "usd"]},
        "city": {"type": "string", "description": "City, e.g. Europe/Paris"}}}}}
    for name, about in (("refund_order", "Refund an order that arrived broken"),
                        ("get_weather", "The weather in a city"))]
ASKS_FOR_TOOLS = ["Refund my broken order 12 in Paris, in usd", "weather in Paris and refund order 3"]
# requests that pass validation but for their text, so that what the text holds (a lone
# surrogate, control characters, a reply over the 8k window) reaches the model
valid = st.fixed_dictionaries({
    "model": MODEL_NAMES,
    "messages": st.lists(st.fixed_dictionaries({
        "role": st.sampled_from(["system", "user", "assistant", "developer"]),
        "content": text | st.sampled_from(["Summarise the conversation so far.",
                                           "word " * 8_170, "call it again"])},
        optional={"reasoning_content": text | st.none()}),
        max_size=3).flatmap(lambda head: (text | st.sampled_from(ASKS_FOR_TOOLS)).map(
            lambda ask: head + [{"role": "user", "content": ask}]))},  # the request echoes it
    optional={"max_tokens": st.integers(1, 9_000), "context_management": context_management,
              "tools": st.sampled_from([SHOP_TOOLS, SHOP_TOOLS[:1]]),
              "temperature": st.floats(0, 2), "top_p": st.floats(0, 1),
              "seed": st.integers(-2 ** 63, 2 ** 63 - 1)})

COUNTS = {"json": 0, "bytes": 0, "requests": 0}


@settings(max_examples=600, deadline=None, derandomize=True)
@given(valid | bodies)
def test_any_json_body_gets_a_json_2xx_or_4xx(live, body):
    COUNTS["json"] += 1
    raw = json.dumps(body).encode()  # ensure_ascii: a lone surrogate goes as its escape
    assert_json_answer(*send(live, "POST", CHAT, raw, {"Content-Type": "application/json"}))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary(max_size=200) | st.builds(lambda head, tail: head + tail,
                                           st.sampled_from([b'{"model": "m", "messages": [',
                                                            b'{"model": ', b"[", b'{"\\u']),
                                           st.binary(max_size=60)))
def test_any_bytes_get_a_json_4xx(live, raw):
    COUNTS["bytes"] += 1
    status, kind, data = send(live, "POST", CHAT, raw)
    assert status != 200 or json.loads(raw)  # only a valid request can be answered
    assert_json_answer(status, kind, data)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.sampled_from(["GET", "POST", "PUT", "DELETE", "OPTIONS", "HEAD", "TRACE"]),
       st.sampled_from(["/", "/health", "/v1/models", CHAT, "/v1/x", "/%ff", "/v1/models?x=1"])
       | st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=30).map(
           lambda p: "/" + p),
       st.binary(max_size=40))
def test_any_method_and_path_get_json(live, method, path, raw):
    COUNTS["requests"] += 1
    status, kind, data = send(live, method, path, raw if method != "GET" else None)
    assert_json_answer(status, kind, data, method)


def test_the_server_is_still_healthy_after_the_fuzzing(live):
    ok = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    assert send(live, "POST", CHAT, ok)[0] == 200
    print("fuzzed:", COUNTS)
