"""Chapter 13's answers: parse_stream gives the unstreamed reply for any chunking (hypothesis:
pieces of any size, cut inside JSON strings and escapes, parallel calls interleaved in any order)
and for the teaching model's own streams; first_ready_call never starts a call whose arguments a
later delta could still change; history_for keeps every message and pairing and is accepted by
every policy's model; reasoning_budget keeps a suffix of raw reasoning within its limit."""
import copy
import json

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from solutions.compaction import check_pairing
from solutions.reasoning_stream import (ASK, FIELD, LOOP_TOOLS, PASS_BACK, POLICIES, REASONER,
                                        RECORD_PREFIX, SINCE_LAST_USER, STRIP, SYSTEM, TOOLS,
                                        decision_record, first_ready_call, history_for,
                                        loop_history, loop_step, parse_stream, reason, reasoning_budget,
                                        think_tokens)
from tests.messages import tool_call


@pytest.fixture(scope="module")
def client():
    with course.llm.serve() as handle:
        yield handle.client()


def chunk(delta):
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


def cut(text, sizes):
    pieces, i, k = [], 0, 0
    while i < len(text):
        n = sizes[k % len(sizes)]
        pieces.append(text[i:i + n])
        i, k = i + n, k + 1
    return pieces


def chunks_of(message, sizes, order):
    """`message` streamed in pieces of `sizes`; the calls' pieces interleaved by `order`."""
    out = [chunk({"role": "assistant", "content": ""})]
    for key in ("reasoning_content", "content"):
        out += [chunk({key: p}) for p in cut(message.get(key) or "", sizes)]
    queues = []
    for index, call in enumerate(message.get("tool_calls") or []):
        head = {"index": index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}
        queues.append([head] + [{"index": index, "function": {"arguments": p}}
                                for p in cut(call["function"]["arguments"], sizes)])
    k = 0
    while any(queues):
        live = [q for q in queues if q]
        q = live[order[k % len(order)] % len(live)]
        out.append(chunk({"tool_calls": [q.pop(0)]}))
        k += 1
    return out + [{"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 1}}]


cities = st.text(alphabet=st.sampled_from('ab Zürich東京"\\}{é'), min_size=1, max_size=12)


@st.composite
def messages(draw):
    calls = [tool_call(f"call_{i}", "get_weather", json.dumps({"city": draw(cities)}, ensure_ascii=draw(st.booleans())))
             for i in range(draw(st.integers(0, 3)))]
    return {"content": draw(st.none() | st.text(min_size=1, max_size=20)),
            "reasoning_content": draw(st.none() | st.text(min_size=1, max_size=40)),
            "tool_calls": calls or None}


@settings(max_examples=200, deadline=None)
@given(messages(), st.lists(st.integers(1, 9), min_size=1, max_size=5),
       st.lists(st.integers(0, 5), min_size=1, max_size=6))
def test_any_chunking_gives_the_whole_reply(message, sizes, order):
    got = parse_stream(chunks_of(message, sizes, order))
    assert got == {"role": "assistant", **message}


@settings(max_examples=150, deadline=None)
@given(messages(), st.lists(st.integers(1, 9), min_size=1, max_size=5),
       st.lists(st.integers(0, 5), min_size=1, max_size=6))
def test_a_call_started_early_is_the_call_the_whole_reply_makes(message, sizes, order):
    chunks = chunks_of(message, sizes, order)
    final = {c["id"]: c for c in message.get("tool_calls") or []}
    started = {}
    for n in range(len(chunks) + 1):
        ready = first_ready_call(parse_stream(chunks[:n]), TOOLS, set(started))
        while ready is not None:
            started[ready["id"]] = ready
            ready = first_ready_call(parse_stream(chunks[:n]), TOOLS, set(started))
    assert started == final  # every valid call starts, each exactly as the whole reply has it


def test_the_teaching_models_streams_parse_to_their_unstreamed_replies(client):
    request = {"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ASK}],
               "tools": TOOLS}
    for model in [course.llm.MODEL_NAME, *REASONER.values()]:
        whole = client.chat.completions.create(model=model, **request).choices[0].message
        chunks = [c.model_dump() for c in client.chat.completions.create(model=model, stream=True, **request)]
        got = parse_stream(chunks)
        assert got["content"] == whole.content
        assert got["reasoning_content"] == (whole.model_extra or {}).get(FIELD)
        assert got["tool_calls"] == [c.model_dump(exclude_none=True) for c in whole.tool_calls]


def test_a_call_cut_before_its_arguments_close_never_starts():
    for text in ('{"city": "Oslo"', '{"city": "Oslo\\"}', '{"city": "a}', '{"city": "\\u00'):
        assert first_ready_call({"tool_calls": [tool_call("call_0", "get_weather", text)]}) is None


# ------------------------------------------------------------------ history_for
@st.composite
def histories(draw):
    """A tool loop with real and wrapped user turns, some reasoning lost or of the wrong kind."""
    n = draw(st.integers(1, 6))
    history = loop_history(n)
    extra = [m for k in range(n + 1, n + 1 + draw(st.integers(0, 3))) for m in loop_step(k)]
    turn = draw(st.sampled_from(["Now the refunds module.", "<tool_response>log</tool_response>"]))
    history = history + [{"role": "user", "content": turn}] + extra
    for i, m in enumerate(history):
        if m["role"] == "assistant":
            history[i] = {**m, FIELD: draw(st.sampled_from([m[FIELD], None, "", {"a": 1}, "MISSING"]))}
            if history[i][FIELD] == "MISSING":
                del history[i][FIELD]
        elif draw(st.integers(0, 9)) == 0:
            history[i] = {**m, FIELD: "stray"}
    return history


@settings(max_examples=40, deadline=None)
@given(histories(), st.sampled_from(POLICIES))
def test_history_for_keeps_every_message_and_is_accepted(client, history, policy):
    before = copy.deepcopy(history)
    out = history_for(policy, history)
    assert history == before
    assert len(out) == len(history) and check_pairing(out) == check_pairing(history)
    for a, b in zip(history, out):
        assert {k: v for k, v in a.items() if k != FIELD} == {k: v for k, v in b.items() if k != FIELD}
        assert b.get(FIELD) is None or (b["role"] == "assistant" and isinstance(b[FIELD], str))
    client.chat.completions.create(model=REASONER[policy], messages=out, tools=LOOP_TOOLS)  # no 400


def test_the_naive_history_is_what_each_policy_refuses(client):
    naive = loop_history(3)
    with pytest.raises(openai.BadRequestError, match="reasoning_content"):
        client.chat.completions.create(model=REASONER[STRIP], messages=naive, tools=LOOP_TOOLS)
    lost = [{k: v for k, v in m.items() if k != FIELD} for m in naive]
    with pytest.raises(openai.BadRequestError, match="reasoning_content"):
        client.chat.completions.create(model=REASONER[PASS_BACK], messages=lost, tools=LOOP_TOOLS)
    assert history_for(PASS_BACK, lost)[2][FIELD] == ""


def test_since_last_user_sends_what_the_template_renders(client):
    history = loop_history(4) + [{"role": "user", "content": "Now the refunds module."}] + loop_step(5) + loop_step(6)
    sent = history_for(SINCE_LAST_USER, history)
    same = client.chat.completions.create(model=REASONER[SINCE_LAST_USER], messages=history, tools=LOOP_TOOLS)
    mine = client.chat.completions.create(model=REASONER[SINCE_LAST_USER], messages=sent, tools=LOOP_TOOLS)
    assert mine.usage.prompt_tokens == same.usage.prompt_tokens
    assert [i for i, m in enumerate(sent) if m.get(FIELD)] == [11, 13]


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError):
        history_for("signed", loop_history(1))


# ------------------------------------------------------------------ reasoning_budget
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 12), st.integers(0, 1500))
def test_the_budget_keeps_a_suffix_within_its_limit(steps, limit):
    history = loop_history(steps)
    out = reasoning_budget(history, limit)
    raw = [not m[FIELD].startswith(RECORD_PREFIX) for m in out if m["role"] == "assistant"]
    assert raw == sorted(raw)  # records first, then the raw suffix
    assert sum(think_tokens(m[FIELD]) for m, r in zip([m for m in out if m["role"] == "assistant"], raw) if r) <= limit
    assert all(reason(k) in json.dumps(out) for k in range(1, steps + 1))  # every probe kept
    assert reasoning_budget(out, limit) == out  # a record stays a record
    assert len(out) == len(history) and check_pairing(out) == check_pairing(history)


def test_a_decision_record_is_short_and_keeps_the_decision():
    text = loop_history(1)[2][FIELD]
    record = decision_record(text)
    assert record.startswith(RECORD_PREFIX) and reason(1) in record and "So I call" in record
    assert think_tokens(record) < think_tokens(text) / 2
    assert decision_record("just one line") == RECORD_PREFIX + "just one line"


def test_a_bad_limit_is_refused():
    for bad in (-1, 1.5, True, "9"):
        with pytest.raises(ValueError):
            reasoning_budget(loop_history(1), bad)
