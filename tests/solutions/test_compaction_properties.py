"""Properties of compaction over randomly generated valid transcripts (parallel calls, results in
any order, failed calls, text-only turns, new user requests): any compaction and any chain of
compactions keeps pairing intact and is accepted by the teaching model, the identifiers of the
compacted turns survive in the summary, and the checker catches every single broken pair."""
import json

import openai
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import course.llm
from solutions.compaction import (check_pairing, compact, is_summary, recent_start, split_head,
                                  split_turns)

MODEL = "teaching-model"
# Fixed examples (derandomize): the suite gives the same verdict on every run and machine.
PROPERTY = settings(max_examples=100, deadline=None, derandomize=True)
WITH_MODEL = settings(max_examples=25, deadline=None, derandomize=True,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])
HEAD = [{"role": "system", "content": "You are a build agent."},
        {"role": "user", "content": "Build the project and report the artefact's checksum."}]
TOOL_NAMES = ("read_file", "run_command", "search_files")


@st.composite
def transcripts(draw, max_turns=14):
    """A valid transcript: the head, then a random sequence of turn shapes. Ids are unique."""
    messages, n = list(HEAD), 0
    for _ in range(draw(st.integers(0, max_turns))):
        shape = draw(st.sampled_from(["calls", "calls", "calls", "text", "user"]))
        if shape == "text":
            messages.append({"role": "assistant", "content": f"Noted after call_{n}."})
        elif shape == "user":
            messages.append({"role": "user", "content": "Also check the static build."})
        else:
            ids = [f"call_{n + j}" for j in range(draw(st.integers(1, 4)))]  # >1: parallel
            n += len(ids)
            calls = [{"id": i, "type": "function", "function": {
                "name": draw(st.sampled_from(TOOL_NAMES)),
                "arguments": json.dumps({"path": f"src/mod_{i}.c"})}} for i in ids]
            messages.append({"role": "assistant", "content": draw(st.sampled_from([None, "Checking."])),
                             "tool_calls": calls})
            for j in draw(st.permutations(range(len(ids)))):  # results in any order
                content = (json.dumps({"ok": False, "error": f"E-{ids[j]}: header not found"})
                           if draw(st.booleans()) else f"42 lines from src/mod_{ids[j]}.c")
                messages.append({"role": "tool", "tool_call_id": ids[j], "content": content})
    return messages


def kept_facts(message):
    """What the rule-based summary promises to keep from a message: calls and JSON errors."""
    for c in message.get("tool_calls") or ():
        yield f"called {c['function']['name']} {c['function']['arguments']}"
    if message["role"] == "tool" and message["content"].startswith("{"):
        yield json.loads(message["content"])["error"]


def compacted_away(original, context):
    present = {id(m) for m in context}
    return [m for m in original if id(m) not in present]


@pytest.fixture(scope="module")
def model():
    with course.llm.serve() as server:
        yield server.client()


@PROPERTY
@given(transcripts())
def test_generated_transcripts_are_valid(messages):
    assert check_pairing(messages).ok


@PROPERTY
@given(transcripts(), st.integers(0, 16))
def test_recent_start_finds_the_same_turns_as_split_turns(messages, keep):
    rest = split_head(messages)[1]
    turns = split_turns(rest)
    start = recent_start(rest, keep)
    assert rest[start:] == [m for t in turns[max(len(turns) - keep, 0):] for m in t]


@PROPERTY
@given(transcripts(), st.integers(0, 16))
def test_any_compaction_keeps_pairing_head_and_recent_turns(messages, keep):
    small = compact(messages, keep_turns=keep)
    assert check_pairing(small).ok, str(check_pairing(small))
    head, rest = split_head(messages)
    turns = split_turns(rest)
    assert small[:2] == head
    if keep >= len(turns):
        assert small == messages
    else:
        recent = [m for t in turns[len(turns) - keep:] for m in t]
        assert small[3:] == recent and is_summary(small[2])
        summary = small[2]["content"]
        for m in compacted_away(messages, small):
            for fact in kept_facts(m):
                assert fact in summary


@PROPERTY
@given(transcripts(max_turns=30),
       st.lists(st.tuples(st.integers(1, 8), st.integers(0, 4)), min_size=1, max_size=6))
def test_any_chain_of_compactions_keeps_pairing_and_identifiers(messages, plan):
    head, rest = split_head(messages)
    turns = split_turns(rest)
    context, seen = list(head), list(head)
    for grow, keep in plan:
        for turn in turns[:grow]:
            context += turn
            seen += turn
        turns = turns[grow:]
        context = compact(context, keep_turns=keep)
        assert check_pairing(context).ok, str(check_pairing(context))
        assert sum(is_summary(m) for m in context) <= 1
        summary = next((m["content"] for m in context if is_summary(m)), "")
        for m in compacted_away(seen, context):
            for fact in kept_facts(m):
                assert fact in summary


@PROPERTY
@given(transcripts(), st.data())
def test_deleting_any_call_or_result_is_caught(messages, data):
    paired = [i for i, m in enumerate(messages) if m["role"] == "tool" or m.get("tool_calls")]
    if not paired:
        return
    i = data.draw(st.sampled_from(paired))
    verdict = check_pairing(messages[:i] + messages[i + 1:])
    assert not verdict.ok
    expected = "missing_result" if messages[i]["role"] == "tool" else "orphan_result"
    assert verdict.kind == expected


@PROPERTY
@given(transcripts(), st.data())
def test_moving_a_result_past_the_next_message_is_caught(messages, data):
    # a result followed directly by a non-tool message: swap the two
    spots = [i for i in range(len(messages) - 1)
             if messages[i]["role"] == "tool" and messages[i + 1]["role"] != "tool"]
    if not spots:
        return
    i = data.draw(st.sampled_from(spots))
    moved = messages[:i] + [messages[i + 1], messages[i]] + messages[i + 2:]
    verdict = check_pairing(moved)
    assert (verdict.ok, verdict.kind) == (False, "late_result")
    assert verdict.index == i + 1


@PROPERTY
@given(transcripts(), st.data())
def test_repeating_a_result_or_a_call_id_is_caught(messages, data):
    tools_at = [i for i, m in enumerate(messages) if m["role"] == "tool"]
    if not tools_at:
        return
    i = data.draw(st.sampled_from(tools_at))
    assert check_pairing(messages[:i + 1] + [messages[i]] + messages[i + 1:]).kind == "duplicate_result"
    caller = max(j for j in range(i) if messages[j].get("tool_calls"))
    turn = messages[caller:caller + 1 + len(messages[caller]["tool_calls"])]
    assert check_pairing(messages + turn).kind == "reused_id"


@WITH_MODEL
@given(transcripts(max_turns=24),
       st.lists(st.tuples(st.integers(1, 8), st.integers(0, 4)), min_size=1, max_size=4))
def test_the_teaching_model_accepts_every_compacted_context(model, messages, plan):
    head, rest = split_head(messages)
    turns = split_turns(rest)
    context = list(head)
    for grow, keep in plan:
        for turn in turns[:grow]:
            context += turn
        turns = turns[grow:]
        context = compact(context, keep_turns=keep)
        model.chat.completions.create(model=MODEL, messages=context)  # raises on a 400


@WITH_MODEL
@given(transcripts(max_turns=10), st.data())
def test_checker_and_teaching_model_agree(model, messages, data):
    """Drop one message at random (or none): the checker and the provider give the same verdict."""
    i = data.draw(st.integers(-1, len(messages) - 1))
    candidate = messages if i < 0 else messages[:i] + messages[i + 1:]
    try:
        model.chat.completions.create(model=MODEL, messages=candidate)
        accepted = True
    except openai.BadRequestError:
        accepted = False
    assert check_pairing(candidate).ok == accepted
