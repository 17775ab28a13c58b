"""The Responses API, simulated (course/llm/responses.py), through the real openai SDK:

- a response is the Chat Completions answer to the same conversation (same reply, same tokens);
- previous_response_id continues a stored conversation and is billed for all of it every turn;
  instructions are not carried over; store=false keeps nothing; GET and DELETE; a bounded store;
- input_tokens.count is exact; truncation disabled is a 400 over the window, auto drops the
  oldest turns whole; prompt_cache_key keeps a cache of its own;
- compaction (context_management and /responses/compact): user messages kept, the rest in one
  sealed item that cannot be read or edited, the current turn whole; the next request is
  built from it;
- malformed requests are 400s naming the field, and no body makes the server answer 500.
"""
import base64
import json

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from course.llm.responses import (COMPACTION_HEADER, ResponseStore, seal, unseal)
from course.llm.validation import RequestError

MODEL = course.llm.MODEL_NAME
WEATHER = {"type": "function", "name": "get_weather", "description": "Current weather for a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}}
CHAT_WEATHER = {"type": "function", "function": {k: v for k, v in WEATHER.items() if k != "type"}}
SYSTEM = "You are a helpful assistant."


@pytest.fixture(scope="module")
def server():
    with course.llm.serve() as handle:
        yield handle


@pytest.fixture(scope="module")
def client(server):
    return server.client()


def trace_text(response) -> str:
    return " ".join(step["why"] for step in response.model_extra["teaching_trace"])


def test_a_response_is_the_chat_answer_to_the_same_conversation(client):
    question = "What's the weather in Paris?"
    got = client.responses.create(model=MODEL, instructions=SYSTEM, input=question, tools=[WEATHER])
    chat = client.chat.completions.create(model=MODEL, tools=[CHAT_WEATHER], messages=[
        {"role": "system", "content": SYSTEM}, {"role": "user", "content": question}])
    [call] = got.output
    expected = chat.choices[0].message.tool_calls[0]
    assert (call.type, call.name, call.arguments, call.call_id) == (
        "function_call", expected.function.name, expected.function.arguments, expected.id)
    assert got.usage.input_tokens == chat.usage.prompt_tokens
    assert got.usage.output_tokens == chat.usage.completion_tokens
    assert got.status == "completed" and got.object == "response" and got.id.startswith("resp_")


def _weather_turns(client, turns: int, chained: bool):
    """`turns` questions, each answered through one get_weather call; chained by
    previous_response_id, or each request sending the whole conversation."""
    billed, sent, previous = [], [], None
    for k in range(turns):
        question = {"role": "user", "content": f"What's the weather in city number {k}?"}
        first = client.responses.create(model=MODEL, instructions=SYSTEM, tools=[WEATHER],
                                        previous_response_id=previous if chained else None,
                                        input=[question] if chained else sent + [question])
        call = first.output[0]
        output = {"type": "function_call_output", "call_id": call.call_id, "output": f"{10 + k} C, clear"}
        done = client.responses.create(model=MODEL, instructions=SYSTEM, tools=[WEATHER],
                                       previous_response_id=first.id if chained else None,
                                       input=[output] if chained else
                                       sent + [question, call.model_dump(exclude_none=True), output])
        sent += [question, call.model_dump(exclude_none=True), output,
                 {"role": "assistant", "content": done.output_text}]
        billed.append((first.usage.input_tokens, done.usage.input_tokens))
        previous = done.id
    return billed


def test_a_chained_conversation_is_billed_for_all_of_it_every_turn(client):
    chained = _weather_turns(client, 10, chained=True)
    whole = _weather_turns(client, 10, chained=False)
    assert chained == whole, "server state saves sending, not tokens"
    firsts = [first for first, _ in chained]
    assert all(later > earlier for earlier, later in zip(firsts, firsts[1:]))


def test_instructions_are_not_carried_over_by_previous_response_id(client):
    first = client.responses.create(model=MODEL, instructions=SYSTEM * 20, input="Hello there")
    again = client.responses.create(model=MODEL, previous_response_id=first.id, input="And again")
    alone = client.responses.create(model=MODEL, input=[
        {"role": "user", "content": "Hello there"}, {"role": "assistant", "content": first.output_text},
        {"role": "user", "content": "And again"}])
    assert again.usage.input_tokens == alone.usage.input_tokens
    assert again.instructions is None


def test_input_tokens_count_is_exact(client):
    first = client.responses.create(model=MODEL, instructions=SYSTEM, input="Weather in Oslo?", tools=[WEATHER])
    follow = [{"type": "function_call_output", "call_id": first.output[0].call_id, "output": "-2 C, snow"}]
    counted = client.responses.input_tokens.count(model=MODEL, instructions=SYSTEM, tools=[WEATHER],
                                                  previous_response_id=first.id, input=follow)
    done = client.responses.create(model=MODEL, instructions=SYSTEM, tools=[WEATHER],
                                   previous_response_id=first.id, input=follow)
    assert counted.object == "response.input_tokens"
    assert counted.input_tokens == done.usage.input_tokens


def test_store_false_keeps_nothing_and_a_stored_response_can_be_read_and_deleted(client):
    kept = client.responses.create(model=MODEL, input="Remember this one")
    assert client.responses.retrieve(kept.id).output_text == kept.output_text
    client.responses.delete(kept.id)
    with pytest.raises(openai.NotFoundError, match="not found"):
        client.responses.retrieve(kept.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.delete(kept.id)
    gone = client.responses.create(model=MODEL, input="Forget this one", store=False)
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model=MODEL, previous_response_id=gone.id, input="Still there?")
    assert raised.value.code == "previous_response_not_found"


def test_the_store_is_bounded_and_forgets_the_oldest_first():
    store = ResponseStore(capacity=3)
    for k in range(5):
        store.put({"id": f"resp_{k}"}, [])
    assert len(store) == 3
    with pytest.raises(RequestError):
        store.get("resp_1")
    assert store.get("resp_4")[0] == {"id": "resp_4"}


def _long_run(turns: int, size: int) -> list[dict]:
    items = []
    for k in range(turns):
        items += [{"role": "user", "content": f"Read part {k} of the log"},
                  {"role": "assistant", "content": f"Part {k}: " + f"line {k} of the log\n" * size}]
    return items + [{"role": "user", "content": "What did the log say in the end?"}]


def test_truncation_disabled_refuses_a_prompt_over_the_window_and_auto_drops_old_turns(client):
    items = _long_run(8, 200)
    small = "teaching-model-8k"
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model=small, input=items)
    assert raised.value.code == "context_length_exceeded"
    got = client.responses.create(model=small, input=items, truncation="auto")
    assert got.usage.input_tokens <= 8192 and got.truncation == "auto"
    assert "truncation auto" in trace_text(got) and "oldest" in trace_text(got)


def test_a_prompt_cache_key_keeps_a_cache_of_its_own(client):
    items = _long_run(4, 120)
    first = client.responses.create(model=MODEL, input=items, prompt_cache_key="tenant-a")
    again = client.responses.create(model=MODEL, input=items, prompt_cache_key="tenant-a")
    other = client.responses.create(model=MODEL, input=items, prompt_cache_key="tenant-b")
    assert first.usage.input_tokens_details.cached_tokens == 0
    assert again.usage.input_tokens_details.cached_tokens > 0
    assert other.usage.input_tokens_details.cached_tokens == 0


def test_over_the_threshold_the_server_compacts_and_the_next_request_is_built_from_it(client):
    items = _long_run(6, 120)
    plain = client.responses.create(model=MODEL, input=items)
    got = client.responses.create(model=MODEL, input=items,
                                  context_management=[{"type": "compaction", "compact_threshold": 2000}])
    assert plain.usage.input_tokens > 2000
    assert got.output[0].type == "compaction" and got.usage.input_tokens < plain.usage.input_tokens
    assert "compaction:" in trace_text(got)
    sealed = got.output[0].encrypted_content
    assert "log" not in sealed and "Summary" not in sealed, "the summary cannot be read"
    follow = client.responses.create(model=MODEL, previous_response_id=got.id, input="Thanks, and next?")
    by_hand = client.responses.create(model=MODEL, input=[
        *[i for i in items[:-1] if i["role"] == "user"], got.output[0].model_dump(exclude_none=True),
        items[-1], {"role": "assistant", "content": got.output_text},
        {"role": "user", "content": "Thanks, and next?"}])
    assert follow.usage.input_tokens == by_hand.usage.input_tokens < plain.usage.input_tokens


def test_the_compact_endpoint_keeps_user_messages_and_the_current_turn(client):
    first = client.responses.create(model=MODEL, instructions=SYSTEM, tools=[WEATHER], input="Weather in Lima?")
    call = first.output[0]
    compacted = client.responses.compact(model=MODEL, input=[
        {"role": "user", "content": "Weather in Lima?"}, call.model_dump(exclude_none=True),
        {"type": "function_call_output", "call_id": call.call_id, "output": "22 C"},
        {"role": "assistant", "content": "It is 22 C in Lima."},
        {"role": "user", "content": "And in Quito?"}])
    assert compacted.object == "response.compaction"
    assert [o.type for o in compacted.output] == ["message", "compaction", "message"]
    assert [o.content[0].text for o in compacted.output if o.type == "message"] == \
        ["Weather in Lima?", "And in Quito?"]
    assert compacted.usage.input_tokens > 0 and compacted.usage.output_tokens > 0


def test_a_one_turn_agent_run_is_compacted_at_its_last_step(client):
    # One request, then many steps of calls and outputs (an agent at work): nothing comes before
    # the current turn, so the cut is inside it: the user message, the compaction, the last step.
    items = [{"role": "user", "content": "Fix the build."}]
    for k in range(6):
        items += [{"type": "function_call", "call_id": f"c{k}", "name": "run", "arguments": json.dumps({"step": k})},
                  {"type": "function_call_output", "call_id": f"c{k}", "output": f"step {k} log " * 80}]
    compacted = client.responses.compact(model=MODEL, input=items)
    assert [o.type for o in compacted.output] == ["message", "compaction", "function_call", "function_call_output"]
    assert compacted.output[2].call_id == compacted.output[3].call_id == "c5"  # the last step, paired
    got = client.responses.create(model=MODEL, input=items,
                                  context_management=[{"type": "compaction", "compact_threshold": 500}])
    assert got.output[0].type == "compaction" and "compaction:" in trace_text(got)
    one_step = client.responses.create(model=MODEL, input=items[:3],
                                       context_management=[{"type": "compaction", "compact_threshold": 10}])
    assert one_step.output[0].type != "compaction" and "one step" in trace_text(one_step)


def test_a_changed_compaction_is_refused(client):
    sealed = seal({"summary": "the real summary"})
    raw = bytearray(base64.urlsafe_b64decode(sealed[5:]))
    raw[20] ^= 1
    forged = sealed[:5] + base64.urlsafe_b64encode(bytes(raw)).decode()
    for bad in (forged, "tmc1.bm90IHNlYWxlZA==", "plain text", seal({"summary": "x"})[:-4]):
        with pytest.raises(openai.BadRequestError) as raised:
            client.responses.create(model=MODEL, input=[{"type": "compaction", "encrypted_content": bad},
                                                        {"role": "user", "content": "go on"}])
        assert raised.value.code == "invalid_encrypted_content"
        assert raised.value.param == "input[0].encrypted_content"


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=300))
def test_a_seal_opens_to_what_it_sealed_and_shows_none_of_it(summary):
    sealed = seal({"summary": summary})
    assert unseal(sealed, "x") == {"summary": summary}
    assert seal({"summary": summary}) == sealed, "deterministic: stored outputs stay the same"


def test_a_compaction_is_shown_to_the_model_as_carried_over_context():
    from course.llm.responses import chat_messages
    messages = chat_messages(None, [{"type": "compaction", "encrypted_content": "", "summary": "S"},
                                    {"type": "message", "role": "user", "content": "next"}])
    assert messages == [{"role": "developer", "content": f"{COMPACTION_HEADER}\nS"},
                        {"role": "user", "content": "next"}]


def test_parallel_calls_answered_out_of_order_are_paired(client):
    first = client.responses.create(model=MODEL, tools=[WEATHER], input="Weather in Paris and in Rome?")
    calls = [o for o in first.output if o.type == "function_call"]
    outputs = [{"type": "function_call_output", "call_id": c.call_id, "output": f"{k} C"}
               for k, c in enumerate(calls)][::-1]
    done = client.responses.create(model=MODEL, tools=[WEATHER], previous_response_id=first.id, input=outputs)
    assert done.status == "completed" and done.output_text


@pytest.mark.parametrize("body,param", [
    ({"input": "hi"}, "model"),
    ({"model": MODEL}, "input"),
    ({"model": MODEL, "input": 3}, "input"),
    ({"model": MODEL, "input": [{"type": "image", "url": "x"}]}, "input[0].type"),
    ({"model": MODEL, "input": [{"role": "robot", "content": "hi"}]}, "input[0].role"),
    ({"model": MODEL, "input": [{"role": "user", "content": [{"type": "input_image"}]}]}, "input[0].content[0].type"),
    ({"model": MODEL, "input": [{"type": "function_call", "call_id": "c", "name": 3, "arguments": "{}"}]},
     "input[0].name"),
    ({"model": MODEL, "input": [{"type": "function_call_output", "output": "x"}]}, "input[0].call_id"),
    ({"model": MODEL, "input": "hi", "tools": [{"type": "web_search"}]}, "tools[0].type"),
    ({"model": MODEL, "input": "hi", "tool_choice": {"type": "file_search"}}, "tool_choice"),
    ({"model": MODEL, "input": "hi", "truncation": "sometimes"}, "truncation"),
    ({"model": MODEL, "input": "hi", "store": "yes"}, "store"),
    ({"model": MODEL, "input": "hi", "max_output_tokens": 4}, "max_output_tokens"),
    ({"model": MODEL, "input": "hi", "stream": True}, "stream"),
    ({"model": MODEL, "input": "hi", "prompt_cache_key": 7}, "prompt_cache_key"),
    ({"model": MODEL, "input": "hi", "context_management": [{"type": "clear"}]}, "context_management[0].type"),
    ({"model": MODEL, "input": "hi", "context_management": [{"type": "compaction", "compact_threshold": 0}]},
     "context_management[0].compact_threshold"),
    ({"model": MODEL, "input": "hi", "previous_response_id": 5}, "previous_response_id"),
])
def test_a_malformed_request_is_a_400_naming_the_field(server, body, param):
    import http.client
    conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
    data = json.dumps(body).encode()
    conn.request("POST", "/v1/responses", body=data, headers={"Content-Type": "application/json"})
    reply = conn.getresponse()
    error = json.loads(reply.read())["error"]
    conn.close()
    assert reply.status == 400 and error["param"] == param, error


junk = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=10)
items = st.lists(st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["message", "function_call", "function_call_output", "reasoning", "compaction"]) | junk,
    "role": st.sampled_from(["user", "assistant", "developer"]) | junk, "content": st.text(max_size=20) | junk,
    "call_id": st.sampled_from(["a", "b"]) | junk, "name": st.just("get_weather") | junk,
    "arguments": st.just("{}") | junk, "output": st.text(max_size=8) | junk,
    "encrypted_content": junk}), max_size=5)
bodies = st.fixed_dictionaries({}, optional={
    "model": st.sampled_from([MODEL, "teaching-model-8k"]) | junk, "input": st.text(max_size=20) | items | junk,
    "instructions": st.text(max_size=20) | junk, "tools": st.just([WEATHER]) | junk, "tool_choice": junk,
    "previous_response_id": junk, "store": junk, "truncation": st.sampled_from(["auto", "disabled"]) | junk,
    "prompt_cache_key": junk, "max_output_tokens": st.integers(-5, 100) | junk,
    "context_management": st.just([{"type": "compaction", "compact_threshold": 10}]) | junk}) | junk


@settings(max_examples=120, deadline=None)
@given(bodies, st.sampled_from(["/v1/responses", "/v1/responses/compact", "/v1/responses/input_tokens"]))
def test_no_body_makes_the_responses_endpoints_answer_500(server, body, path):
    import http.client
    conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
    conn.request("POST", path, body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    reply = conn.getresponse()
    data = reply.read()
    conn.close()
    assert reply.status == 200 or 400 <= reply.status < 500, data[:400]
    assert reply.getheader("Content-Type") == "application/json"


@pytest.mark.parametrize("method,path,status", [
    ("GET", "/v1/responses/resp_unknown", 404), ("DELETE", "/v1/responses/resp_unknown", 404),
    ("DELETE", "/v1/chat/completions", 405), ("GET", "/v1/responses/" + "x" * 300, 404)])
def test_reading_or_deleting_what_is_not_stored_is_a_json_4xx(server, method, path, status):
    import http.client
    conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
    conn.request(method, path)
    reply = conn.getresponse()
    error = json.loads(reply.read())["error"]
    conn.close()
    assert reply.status == status and error["message"], error
