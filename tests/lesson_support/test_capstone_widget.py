"""Chapter 19's run explorer: the request's bar, what the desk did and the score so far, from the
steps lesson_support.capstone_lesson.recorded_run returns; and recorded_run itself on a real run."""
from __future__ import annotations

import pytest

from lesson_support.widgets.capstone import (bar_segments, composition_html, desk_html, header_line,
                                             run_explorer, score_line)

pytestmark = pytest.mark.usefixtures("english_unless_told")  # tests/conftest.py

WARMTH = {"cached_tokens": 0, "cost": 0}   # what a second run of the same task gets from the cache
COMPOSITION = {"tools": 900, "system": 400, "user": 120, "desk": 0, "results": 2_000, "fenced": 300,
               "cleared": 40, "total": 3_760, "n_fenced": 2, "n_cleared": 3, "n_capped": 1, "notes": 1}


def step(number=1, **changes) -> dict:
    call = {"id": "c1", "type": "function",
            "function": {"name": "trip_log", "arguments": '{"booking_ref": "<QZKLMA>"}'}}
    base = {"number": number, "session": 2, "turn": 'Show me the log of trip "QZKLMA".',
            "messages": [], "composition": COMPOSITION, "refused": None, "prompt": 3_760, "cached": 2_048,
            "completion": 20, "reply": {"role": "assistant", "tool_calls": [call]},
            "results": [{"role": "tool", "tool_call_id": "c1",
                         "content": "Error: the reservation system timed out; try the same call again"}],
            "timeouts": 1, "leaks": 0, "wrong": ["QZKLMA.bags: 0, expected 1"], "tokens": 7_560,
            "cached_total": 2_048, "prompt_total": 7_520, "cost": 0.0123, "leaks_total": 0}
    return base | changes


def test_the_bar_keeps_the_parts_in_order_and_leaves_out_empty_ones():
    assert bar_segments(COMPOSITION) == [("tools", 900), ("system", 400), ("user", 120), ("results", 2_000),
                                         ("fenced", 300), ("cleared", 40)]
    assert bar_segments({"tools": 0, "total": 0}) == []


def test_the_bar_is_scaled_to_the_window_with_the_budget_marked_and_says_what_the_layers_did():
    page = composition_html(COMPOSITION, window=8_000, budget=7_600)
    assert "width:25.00%" in page            # 2,000 result tokens of an 8,000-token window
    assert "left:95.00%" in page             # the budget's dashed mark
    assert "sent 3,760 tokens; the window is 8,000, the budget (dashed) 7,600" in page
    assert "2 fenced; 3 cleared; 1 capped; a note written into the turn" in page
    over = composition_html({**COMPOSITION, "total": 10_000}, window=8_000, budget=7_600)
    assert "left:76.00%" in over, "a request over the window widens the scale instead of spilling out"


def test_what_the_desk_did_marks_a_timeout_and_escapes_what_the_world_wrote():
    page = desk_html(step())
    assert "<b>timed out</b>" in page
    assert "&lt;QZKLMA&gt;" in page and "<QZKLMA>" not in page
    answered = desk_html(step(reply={"role": "assistant", "content": "Sure: CANARY-1 <b>"}, results=[], leaks=1))
    assert "answered: Sure: CANARY-1 &lt;b&gt;" in answered and "repeats a canary: a leak" in answered
    refused = desk_html(step(refused="This model's maximum context length is 8192 tokens.", reply=None))
    assert "refused (HTTP 400): This model&#x27;s maximum context length is 8192 tokens." in refused


def test_the_header_and_the_score_so_far():
    assert header_line(step(number=3), 40) == (
        'request 3 of 40, session 2: the customer said “Show me the log of trip "QZKLMA".”')
    assert score_line(step()) == ("So far: 7,560 tokens, 27% of prompt tokens from the cache, $0.012, "
                                  "0 leaked; 1 field differs from the expected end state.")
    assert score_line(step(wrong=[], leaks_total=2)).endswith(
        "2 leaked; the database matches the expected end state.")


def test_the_explorer_loads_a_run_when_asked_and_its_slider_follows_the_run():
    asked = []
    runs = {("naive", "t"): [step(1), step(2)], ("assembled", "t"): [step(1), step(2), step(3, wrong=[])]}

    def load(manager, task):
        asked.append((manager, task))
        return runs[manager, task]

    box = run_explorer(load, ["naive", "assembled"], ["t"], window=8_000, budget=7_600)
    manager, _task, number, out = box.children
    assert number.max == 2 and "request 1 of 2" in out.value
    manager.value = "assembled"
    assert number.max == 3 and "request 1 of 3" in out.value
    number.value = 3
    assert "request 3 of 3" in out.value and "matches the expected end state" in out.value
    assert asked[:2] == [("naive", "t"), ("assembled", "t")]


def test_composition_counts_each_part_and_what_the_layers_did():
    from course.givens.capstone import TOOLS
    from lesson_support.capstone_lesson import composition, message_tokens
    from solutions.capstone.layers import cap_results, clear_old_results, fence, remember
    from solutions.tokens import count_request_tokens

    call = {"id": "c1", "type": "function", "function": {"name": "trip_log", "arguments": "{}"}}
    history = [{"role": "user", "content": 'PIN 1234. Add a bag to trip "QZKLMA".'},
               {"role": "assistant", "content": None, "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "c1", "content": "log line " * 400},
               {"role": "user", "content": "One more bag on the same trip as before, same PIN."},
               {"role": "assistant", "content": None, "tool_calls": [{**call, "id": "c2"}]},
               {"role": "tool", "tool_call_id": "c2", "content": "log line " * 400}]
    system, fenced = fence("Be brief.", remember(clear_old_results(cap_results(history))))
    messages = [{"role": "system", "content": system}, *fenced]
    got = composition(messages)
    assert (got["n_cleared"], got["n_fenced"], got["n_capped"], got["notes"]) == (1, 2, 1, 1)   # the cleared stub is fenced too
    assert got["cleared"] == message_tokens(fenced[2]) and got["fenced"] == message_tokens(fenced[5])
    assert got["results"] == 0 and got["system"] == message_tokens(messages[0])
    assert got["tools"] == count_request_tokens([], TOOLS) - count_request_tokens([])
    assert got["total"] == count_request_tokens(messages, TOOLS)
    assert sum(got[p] for p in ("tools", "system", "user", "desk", "results", "fenced", "cleared")) == \
        got["total"] - count_request_tokens([])


def test_a_recorded_run_is_the_capstones_run_taken_apart(client):
    from course.givens.capstone import make_task, run
    from lesson_support.capstone import MANAGERS
    from lesson_support.capstone_lesson import recorded_run, run_row

    task = make_task(105, size=12)          # a policy over the window (one 400) and a canary
    record, steps = recorded_run(MANAGERS["naive"], task, 1, client)
    assert run_row(record) | WARMTH == run_row(run(MANAGERS["naive"], task, 1, client)) | \
        WARMTH, "watching a run changes nothing but the cache's warmth (cached tokens, cost)"
    assert len(steps) == record["requests"] + record["refused"] and record["refused"] == 1
    assert [s["number"] for s in steps] == list(range(1, len(steps) + 1))
    answered = [s for s in steps if not s["refused"]]
    assert all(s["composition"]["total"] == s["prompt"] for s in answered)
    assert steps[-1]["prompt_total"] == record["prompt_tokens"] and steps[-1]["tokens"] == \
        record["prompt_tokens"] + record["completion_tokens"]
    assert steps[-1]["cost"] == pytest.approx(record["cost"], abs=1e-5)
    assert steps[-1]["leaks_total"] == record["leaks"] > 0 and steps[-1]["wrong"] == record["wrong"]
    assert len(steps[0]["wrong"]) >= len(steps[-1]["wrong"]), "the database moves toward the end state"
    refused = next(s for s in steps if s["refused"])
    assert "maximum context length is 8192 tokens" in refused["refused"] and refused["reply"] is None


def test_the_explorer_speaks_chinese(monkeypatch):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    assert score_line(step()) == ("到目前为止：7,560 个 token，27% 的提示 token 来自缓存，$0.012，泄露 0 次；"
                                  "1 个字段与预期的最终状态不同。")
    assert header_line(step(number=3), 40).startswith("第 3 个请求（共 40 个），会话 2：客户说")
    assert "<b>超时</b>" in desk_html(step())
    assert "发送了 3,760 个 token；窗口是 8,000，预算（虚线）是 7,600" in composition_html(COMPOSITION, 8_000, 7_600)
    box = run_explorer(lambda manager, task: [step()], ["naive"], ["t"], window=8_000, budget=7_600)
    assert (box.children[1].description, box.children[2].description) == ("任务", "请求")
    assert box.children[0].value == "naive", "a translated label never changes what a control selects"
