"""Chapter 13's lesson support and widget: the raw reply's tokens, the delta kinds, simulated
pacing (from token counts, so the same everywhere), start-early against waiting, the simulated
signed blocks' 400s, keep_last, the loop measurement's figures against the server's, and the
stepper's state and next-request rows."""
import json

import pytest

import course.llm
from course.givens.reasoning_stream import (ASK, FIELD, PASS_BACK, REASONER, SINCE_LAST_USER, STRIP,
                                            SYSTEM, TOOLS, RECORD_PREFIX, loop_history, loop_step, reason)
from lesson_support.reasoning_stream import (chunk_dicts, chunk_tokens, delta_kind, keep_last,
                                             kind_runs, measure_loop, paced, reply_tokens, sign,
                                             signed, signed_problems, start_early)
from lesson_support.widgets.reasoning_stream import next_request_rows, state_at
from solutions.reasoning_stream import parse_stream


@pytest.fixture(scope="module")
def stream():
    with course.llm.serve() as server:
        client = server.client()
        request = {"model": REASONER[PASS_BACK], "tools": TOOLS,
                   "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ASK}]}
        whole = client.chat.completions.create(**request).choices[0].message
        chunks = chunk_dicts(client.chat.completions.create(stream=True, **request))
    return whole, chunks


def test_the_raw_reply_is_think_then_text_then_end(stream):
    whole, _ = stream
    tokens = reply_tokens({FIELD: whole.model_extra[FIELD], "content": whole.content,
                           "tool_calls": [c.model_dump() for c in whole.tool_calls]})
    kinds = [k for k, _ in tokens]
    assert kinds == sorted(kinds, key=["think", "text", "end"].index) and kinds[-1] == "end"
    assert "".join(t for k, t in tokens if k == "think").startswith("<think>\n")
    assert "<tool_call>" in "".join(t for k, t in tokens if k == "text")


def test_delta_kinds_come_in_the_fixed_order(stream):
    _, chunks = stream
    runs = [kind for kind, _ in kind_runs(chunks)]
    assert runs[:2] == ["role", "reasoning"] and runs[-1] == "finish (tool_calls)"
    assert runs[2].startswith("call 0 opened") and any(r.startswith("call 1 opened") for r in runs)
    assert delta_kind({"choices": []}) == "empty"


def test_pacing_is_computed_from_tokens(stream):
    _, chunks = stream
    timed = paced(chunks, 50)
    assert [t for t, _ in timed] == sorted(t for t, _ in timed)
    assert timed[-1][0] == pytest.approx(sum(chunk_tokens(c) for c in chunks) / 50)
    assert paced(chunks, 50) == timed  # no clock involved


def test_starting_early_beats_waiting_and_starts_the_same_calls(stream):
    whole, chunks = stream
    early = start_early(chunks, 40, 0.5)
    assert [s[0] for s in early.starts] == [c.id for c in whole.tool_calls]
    assert early.first_streamed < early.first_whole == early.reply_done
    assert early.done_streamed <= early.done_whole
    # a call whose arguments never close never starts
    cut = [c for c in chunks if delta_kind(c) != "call 1 arguments" or '}' not in str(c)]
    assert len(start_early(cut, 40, 0.5).starts) == 1


def test_signed_blocks_must_come_back_unchanged_inside_the_loop():
    history = signed(loop_history(3))
    assert signed_problems(history) == []
    edited = [dict(m) for m in history]
    edited[4][FIELD] += " (edited)"
    assert "invalid signature" in signed_problems(edited)[0]
    missing = [{k: v for k, v in m.items() if k != FIELD} for m in history]
    assert len(signed_problems(missing)) == 3
    after_user = edited + [{"role": "user", "content": "Thanks. Why?"}]
    assert signed_problems(after_user) == []  # old blocks are ignored after a new user turn
    assert sign("a") != sign("b")


def test_keep_last_keeps_the_newest_raw():
    out = keep_last(loop_history(6), 2)
    kinds = [m[FIELD].startswith(RECORD_PREFIX) for m in out if m["role"] == "assistant"]
    assert kinds == [True] * 4 + [False] * 2
    assert all(reason(k) in json.dumps(out) for k in range(1, 7))


def test_the_loop_figures_agree_with_the_server():
    with course.llm.serve() as server:
        result = measure_loop("since last user (Qwen3)", server.client(), steps=50, stride=10)
    for j, (prompt, _) in result.sent.items():
        assert prompt == result.prompts[j - 1]
    assert result.in_loop[50] == 49 and result.after_user[50] == 0
    with course.llm.serve() as server:
        strip = measure_loop("strip (R1)", server.client(), steps=10, stride=5)
    assert strip.in_loop[10] == 0 and strip.prompts[9] < result.prompts[9]


def test_the_stepper_shows_the_reply_growing(stream):
    whole, chunks = stream
    assert state_at(chunks, 0)["message"]["reasoning_content"] is None
    states = [state_at(chunks, n) for n in range(len(chunks) + 1)]
    first = next(s["n"] for s in states if s["ready"])
    assert states[first]["ready"] == whole.tool_calls[0].id
    assert states[first]["kind"] == "call 0 arguments"
    assert state_at(chunks, 10_000)["message"] == parse_stream(chunks)


def test_next_request_rows_follow_the_policy():
    history = loop_history(2) + [{"role": "user", "content": "next"}] + loop_step(3)
    assert [r["reasoning"] for r in next_request_rows(history, STRIP) if r["role"] == "assistant"] == ["dropped"] * 3
    assert [r["reasoning"] for r in next_request_rows(history, PASS_BACK) if r["role"] == "assistant"] == ["sent"] * 3
    got = [r["reasoning"] for r in next_request_rows(history, SINCE_LAST_USER) if r["role"] == "assistant"]
    assert got == ["dropped", "dropped", "sent"]
    assert next_request_rows(history, STRIP)[0] == {"role": "system", "reasoning": ""}
