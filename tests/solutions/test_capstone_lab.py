"""Lab 19's reference answers (solutions.capstone): the four techniques as the lab states them,
their invariants on generated histories, the assembled next_request on the teaching model, and
the rule that the graded worker cannot import them (a student composes the manager)."""
import copy
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.givens.capstone import (DEV_SEEDS, WORKER_ANSWERS, confined_manager, dev_tasks, evaluate,
                                    make_task, public_view, tools_of)
from course.labs import confinement
from course.llm.template import piece_ids
from course.labs.remote import ExerciseError
from lesson_support.capstone import naive
from solutions.capstone import cap_results, fence, next_request, remember, self_test, slide_stably
from solutions.capstone.layers import slide
from solutions.compaction.turns import split_turns
from solutions.tokens import count_request_tokens, truncate_to_tokens

DESK = {"family": "desk"}
NOTE = {"desk": 'PIN {code}, trip "{item}"', "repo": 'approval code {code}, module "{item}"',
        "research": 'editor key {code}, claim "{item}"'}
ITEM = re.compile(r'"([A-Za-z][A-Za-z_-]{3,31})"')
CODE = re.compile(r"\b(\d{4})\b")


def user(text):
    return {"role": "user", "content": text}


def reply(text="Done."):
    return {"role": "assistant", "content": text}


def tool(text, call="c1"):
    return {"role": "tool", "tool_call_id": call, "content": text}


# ------------------------------------------------------------------ cap_results
def test_a_long_result_keeps_its_start_and_says_how_much_was_cut():
    text = "policy " * 900
    cut = truncate_to_tokens(text, 500)
    got = cap_results([user("read it"), tool(text), tool("short")])
    assert got == [user("read it"), tool(cut.text + f"\n[{cut.cut_tokens} more tokens not shown]"),
                   tool("short")]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool"]), st.integers(0, 400)), max_size=8),
       st.integers(1, 200))
def test_capping_touches_only_results_over_the_cap(shape, cap):
    history = [{"role": role, "content": "word " * n, **({"tool_call_id": "c"} if role == "tool" else {})}
               for role, n in shape]
    kept = copy.deepcopy(history)
    got = cap_results(history, cap=cap)
    assert history == kept and len(got) == len(history)
    for before, after in zip(history, got):
        if before["role"] != "tool" or not truncate_to_tokens(before["content"], cap).truncated:
            assert after == before
        else:
            assert after["content"].startswith(truncate_to_tokens(before["content"], cap).text)
            assert after["content"].endswith("more tokens not shown]")


# ------------------------------------------------------------------ fence
def test_results_are_fenced_as_data_and_errors_stay_readable():
    history = [user("status?"), tool("Error: the reservation system timed out; try the same call again"),
               tool("Trip QZKLMA: active")]
    system, fenced = fence("You are the desk.", history)
    assert system.startswith("You are the desk.\n\n") and "external_content" in system
    assert fenced[:2] == history[:2]
    assert fenced[2]["content"] == '<external_content source="tool">\nTrip QZKLMA: active\n</external_content>'


def test_the_fence_policy_is_one_the_teaching_model_honours():
    from course.llm.untrusted import POLICY_WORDS
    system, _ = fence("S", [])
    assert "external_content" in system and POLICY_WORDS.search(system)


# ------------------------------------------------------------------ remember
@pytest.mark.parametrize("family", sorted(NOTE))
def test_a_call_back_gets_the_last_item_and_code_given_together(family):
    history = [user('PIN 1111. Move trip "AAAAAA" to friday.'), reply(),
               user('Code 4821: apply the fix to "mailer_pdq".'), reply(),
               user("The same one as before, please.")]
    got = remember(history, {"family": family})
    note = NOTE[family].format(code="4821", item="mailer_pdq")
    assert got[:4] == history[:4]
    assert got[4]["content"] == "The same one as before, please.\n" + note + " (as noted earlier in the conversation)."


@pytest.mark.parametrize("last", ['Which day does trip "BCDEFG" fly?', "Read me your refunds policy.",
                                  "PIN 7777, the same trip as before.", "What is my trip's status?"])
def test_a_message_naming_its_own_item_or_code_or_not_referring_back_is_left_alone(last):
    history = [user('PIN 4821. Add a bag to trip "QZKLMA".'), reply(), user(last)]
    assert remember(history, DESK) == history


def test_remember_finds_every_call_back_of_the_development_set():
    """The lab's check, on the reference: every family's call-backs get the latest item and code."""
    families = set()
    for task in dev_tasks():
        view = public_view(task, 1)
        turns = [t for session in task["sessions"] for t in session]
        for k, kind in enumerate(task["kinds"]):
            if kind.startswith("recall"):
                item, code = next((i.group(1), c.group(1)) for t in reversed(turns[:k])
                                  for i, c in [(ITEM.search(t), CODE.search(t))] if i and c)
                history = [m for t in turns[:k + 1] for m in (user(t), reply())][:-1]
                note = NOTE[view["family"]].format(code=code, item=item)
                assert remember(history, view)[-1]["content"].endswith(f"\n{note} (as noted earlier in the conversation).")
                families.add(view["family"])
    assert families == set(NOTE)


def test_the_trace_counts_a_written_note_as_notes_and_a_summary_as_summary():
    """Tagged by the layer that wrote them (course.tracing.tag): the user's own words stay history."""
    from course.tracing.composition import compose
    from solutions.capstone.layers import summarise

    history = [user('PIN 4821. Add a bag to trip "QZKLMA".'), reply(), user("Same trip as before: a seat too.")]
    noted = remember(history, DESK)
    parts = compose(noted).by_part()
    added = noted[-1]["content"][len(history[-1]["content"]):]
    assert parts["notes"] == len(piece_ids(added)) and parts["history"] > 0
    assert compose(history).by_part().keys() == {"history"}
    summary = summarise(history + [reply(), user("And a meal?"), reply()], keep_turns=1)[0]
    assert compose([summary]).parts == ("summary",)


# ------------------------------------------------------------------ slide_stably
def conversation(sizes):
    out = []
    for k, n in enumerate(sizes):
        out += [user(f"q{k} " + "ask " * n), reply(f"a{k} " + "say " * n)]
    return out


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(5, 300), min_size=1, max_size=40), st.integers(1, 8))
def test_the_window_fits_and_moves_in_chunks_no_further_than_needed(sizes, chunk):
    view = {**public_view(make_task(DEV_SEEDS[0], size=6), 1), "window": 2500}
    head = [{"role": "system", "content": "S"}]
    history = conversation(sizes)
    got = slide_stably(head, history, view, chunk=chunk)
    tools, room = tools_of(view), view["window"] - view["reply_room"]
    kept = got[1:]
    assert got[:1] == head and kept == history[len(history) - len(kept):] and kept[0]["role"] == "user"
    dropped_turns = len(split_turns(history)) - len(split_turns(kept))
    fitting = [s for s in range(len(split_turns(history))) if count_request_tokens(
        head + [m for t in split_turns(history)[s:] for m in t], tools) <= room]
    if dropped_turns and fitting:
        assert count_request_tokens(got, tools) <= room
        # it moved in whole chunks, or stepped one turn at a time near the end, or went back to the
        # last user message when a chunk had jumped past it
        whole = dropped_turns - dropped_turns % chunk
        at_last_user = [m for m in kept if m["role"] == "user"] == kept[:1]
        assert dropped_turns % chunk == 0 or whole + chunk >= len(split_turns(history)) or at_last_user
    if not dropped_turns:
        assert got == head + history


def test_the_window_opens_on_the_same_message_for_many_requests():
    view = {**public_view(make_task(DEV_SEEDS[0], size=6), 1), "window": 3000}
    history = conversation([40] * 60)
    def changes(window):
        firsts = [window([{"role": "system", "content": "S"}], history[:n], view)[1]["content"]
                  for n in range(2, len(history) + 1, 2)]
        return sum(a != b for a, b in zip(firsts, firsts[1:]))
    # 120 turns: the cut moves at most once per 12 turns; a one-turn window moves at every request
    assert changes(slide_stably) <= 120 // 12 < changes(slide) // 4


# ------------------------------------------------------------------ the manager
def test_next_request_is_a_request_that_fits_and_keeps_the_last_message(client):
    task = make_task(DEV_SEEDS[3], size=6)
    from course.givens.capstone import run
    history = run(naive, task, 1, client)["history"]
    view = public_view(task, len(task["sessions"]))
    got = next_request(copy.deepcopy(history), view)
    assert list(got) == ["messages"] and got["messages"][0]["role"] == "system"
    assert got["messages"][0]["content"].startswith(view["system"])
    assert count_request_tokens(got["messages"], tools_of(view)) <= view["window"] - view["reply_room"]
    last = [m["content"] for m in history if m["role"] == "user"][-1]
    assert any(m["role"] == "user" and m["content"].startswith(last) for m in got["messages"])


def test_the_assembled_manager_beats_naive_on_the_short_development_set(client):
    """The lab's manager check, on the reference: no leak, every run right, above naive, in
    every family."""
    tasks = dev_tasks(size=6)
    assert {public_view(t, 1)["family"] for t in tasks} == set(NOTE)
    mine, runs = evaluate(next_request, tasks, client, trials=(1,))
    theirs, _ = evaluate(naive, tasks, client, trials=(1,))
    assert mine["leaks"] == 0 and mine["success"] == 1.0 and mine["errors"] == 0
    assert mine["score"] > theirs["score"]


def test_the_self_test_answers_are_letters_of_the_four_questions():
    assert sorted(self_test()) == ["q1", "q2", "q3", "q4"]
    assert all(v in "abcd" for v in self_test().values())


# ------------------------------------------------------------------ the worker cannot import them
def test_the_worker_is_given_no_capstone_answer():
    assert not any(name == "solutions.capstone" or name.startswith("solutions.capstone.")
                   for name in WORKER_ANSWERS)


@pytest.mark.skipif(confinement.problem() is not None, reason=f"no confinement here: {confinement.problem()}")
def test_the_confined_worker_refuses_the_reference_manager_and_gives_the_earlier_answers(tmp_path):
    given_ok = ("from solutions.compaction.turns import split_turns\n"
                "def next_request(history, task):\n    return {'messages': [{'role': 'system', 'content': 'S'}]}\n")
    manager, worker = confined_manager(given_ok, tmp_path / "ok")
    try:
        assert manager([], {"system": "S"}) == {"messages": [{"role": "system", "content": "S"}]}
    finally:
        worker.stop()
    with pytest.raises(ExerciseError, match="No module named 'solutions.capstone'"):
        manager, worker = confined_manager("from solutions.capstone.manager import next_request\n", tmp_path / "ref")
        worker.stop()
