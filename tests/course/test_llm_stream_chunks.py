"""stream=True on /v1/chat/completions: Server-Sent Events of chat.completion.chunk whose deltas
rebuild the non-streamed reply to the same request, through the real openai SDK."""
import json
import urllib.request

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from course.llm.streaming import token_pieces

TOOLS = [{"type": "function", "function": {
    "name": "read_file", "description": "Read a file in the workspace",
    "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "file path"}},
                   "required": ["path"]}}}]
ASKS = {
    "text": [{"role": "user", "content": "Say hello in a long sentence about 上下文工程 please."}],
    "tool call": [{"role": "user", "content": "Please read the file notes/上下文.txt and tell me"}],
}


@pytest.fixture(scope="module")
def client():
    with course.llm.serve() as server:
        yield server.client()


def rebuilt(chunks):
    text, calls, finishes = "", {}, []
    for chunk in chunks:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or []:
                slot = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
                slot["id"] = call.id or slot["id"]
                slot["name"] += (call.function.name or "") if call.function else ""
                slot["arguments"] += (call.function.arguments or "") if call.function else ""
            if choice.finish_reason:
                finishes.append(choice.finish_reason)
    return text, [calls[i] for i in sorted(calls)], finishes


@pytest.mark.parametrize("kind", ASKS)
def test_the_deltas_rebuild_the_reply_sent_whole(client, kind):
    whole = client.chat.completions.create(model=course.llm.MODEL_NAME, messages=ASKS[kind], tools=TOOLS)
    chunks = list(client.chat.completions.create(model=course.llm.MODEL_NAME, messages=ASKS[kind],
                                                 tools=TOOLS, stream=True))
    text, calls, finishes = rebuilt(chunks)
    message = whole.choices[0].message
    assert text == (message.content or "")
    assert calls == [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                     for c in message.tool_calls or []]
    assert finishes == [whole.choices[0].finish_reason]  # exactly one
    assert all(c.usage is None for c in chunks)  # no usage chunk unless asked
    assert len(chunks) > 2  # really cut into pieces


def test_include_usage_adds_one_last_chunk_with_the_usage(client):
    whole = client.chat.completions.create(model=course.llm.MODEL_NAME, messages=ASKS["text"])
    chunks = list(client.chat.completions.create(model=course.llm.MODEL_NAME, messages=ASKS["text"],
                                                 stream=True, stream_options={"include_usage": True}))
    assert chunks[-1].choices == [] and chunks[-1].usage == whole.usage
    assert all(c.usage is None for c in chunks[:-1])


def test_the_sdk_stream_helper_gives_the_same_message(client):
    whole = client.chat.completions.create(model=course.llm.MODEL_NAME, messages=ASKS["tool call"], tools=TOOLS)
    with client.chat.completions.stream(model=course.llm.MODEL_NAME, messages=ASKS["tool call"],
                                        tools=TOOLS) as stream:
        final = stream.get_final_completion()
    got = final.choices[0].message.model_dump(exclude_none=True)
    for call in got.get("tool_calls", []):
        call.pop("index", None)  # the helper keeps the delta's index
    assert got == whole.choices[0].message.model_dump(exclude_none=True)


def test_two_streams_in_a_row_on_one_connection(client):
    for _ in range(2):
        chunks = list(client.chat.completions.create(model=course.llm.MODEL_NAME,
                                                     messages=ASKS["text"], stream=True))
        assert chunks[-1].choices[0].finish_reason == "stop"


def test_a_bad_streamed_request_is_a_json_400_before_any_event(client):
    with pytest.raises(openai.BadRequestError, match="stream_options"):
        client.chat.completions.create(model=course.llm.MODEL_NAME, messages=ASKS["text"],
                                       stream_options={"include_usage": True})
    with pytest.raises(openai.BadRequestError, match="stream"):
        client.chat.completions.create(model=course.llm.MODEL_NAME, messages=ASKS["text"],
                                       extra_body={"stream": "yes"})


def test_on_the_wire_each_event_is_one_data_line_and_the_stream_ends_with_done(client):
    body = json.dumps({"model": course.llm.MODEL_NAME, "messages": ASKS["text"], "stream": True}).encode()
    request = urllib.request.Request(f"{client.base_url}chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        kind, raw = response.headers["Content-Type"], response.read().decode("utf-8")
    assert kind.startswith("text/event-stream")
    events = raw.split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]  # the last event, then nothing
    for event in events[:-2]:
        assert event.startswith("data: ") and "\n" not in event, event
        assert json.loads(event[len("data: "):])["object"] == "chat.completion.chunk"


def test_a_reply_cut_by_max_tokens_streams_the_same_cut_and_says_length(client):
    ask = dict(model=course.llm.MODEL_NAME, messages=ASKS["text"], max_tokens=5)
    whole = client.chat.completions.create(**ask)
    text, calls, finishes = rebuilt(list(client.chat.completions.create(**ask, stream=True)))
    assert whole.choices[0].finish_reason == "length"
    assert (text, calls, finishes) == (whole.choices[0].message.content, [], ["length"])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=80),
       st.booleans())
def test_any_request_streams_the_reply_it_gets_whole(client, question, with_tools):
    ask = dict(model=course.llm.MODEL_NAME, messages=[{"role": "user", "content": question}],
               **({"tools": TOOLS} if with_tools else {}))
    whole = client.chat.completions.create(**ask).choices[0]
    text, calls, finishes = rebuilt(list(client.chat.completions.create(**ask, stream=True)))
    assert text == (whole.message.content or "") and finishes == [whole.finish_reason]
    assert calls == [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                     for c in whole.message.tool_calls or []]


@pytest.mark.parametrize("text", ["", "plain words", "上下文工程 🙂 mixed", json.dumps({"path": "a/上.txt"}),
                                  "x" * 5000])
@pytest.mark.parametrize("per_piece", [1, 4])
def test_token_pieces_join_back_and_never_split_a_character(text, per_piece):
    pieces = token_pieces(text, per_piece)
    assert "".join(pieces) == text
    assert all("\ufffd" not in p for p in pieces)
