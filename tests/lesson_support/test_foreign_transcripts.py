"""The real-world shape generator: each shape really has the property it claims, every
transcript keeps the Chat Completions pairing turn by turn, and the same seed gives the same
transcript."""
import json

import pytest
from hypothesis import given, settings

from course.identifiers import identifiers
from lesson_support.foreign_transcripts import (FEATURES, HUGE_CHARS, LONG_IDENTIFIERS,
                                                LONG_MESSAGES, MAX_PARALLEL, SHAPES,
                                                foreign_transcript, transcripts)
from solutions.compaction import check_pairing

SEEDS = range(4)
SIZES = (1, 3)


def text(content) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    return "".join(part["text"] for part in content)


def calls(messages):
    return [c for m in messages for c in m.get("tool_calls") or ()]


def groups(messages):
    """(calls, results) for each assistant message with calls."""
    out = []
    for i, m in enumerate(messages):
        if m.get("tool_calls"):
            j = i + 1
            while j < len(messages) and messages[j]["role"] == "tool":
                j += 1
            out.append((m["tool_calls"], messages[i + 1:j]))
    return out


def all_ids_text(messages) -> str:
    return "\n".join(text(m.get("content")) + " " + " ".join(
        c["function"]["arguments"] for c in m.get("tool_calls") or ()) for m in messages)


def each(shape):
    return [SHAPES[shape](seed, size) for seed in SEEDS for size in SIZES]


def pairs_turn_by_turn(messages):
    """Every call answered by exactly one result right after it, before any other message,
    ids unique inside a message; the task is the first user message, before any call."""
    assert messages[0]["role"] == "system"
    first_user = next(i for i, m in enumerate(messages) if m["role"] == "user")
    assert not calls(messages[:first_user])
    for made, results in groups(messages):
        ids = [c["id"] for c in made]
        assert len(set(ids)) == len(ids)
        assert sorted(r["tool_call_id"] for r in results) == sorted(ids)
        for c in made:
            assert isinstance(c["function"]["arguments"], str)
    n_results = sum(m["role"] == "tool" for m in messages)
    assert n_results == len(calls(messages))
    assert messages[-1]["role"] == "assistant" and not messages[-1].get("tool_calls")


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_shape_pairs_turn_by_turn_and_is_deterministic(shape):
    for seed in SEEDS:
        for size in SIZES:
            messages = SHAPES[shape](seed, size)
            pairs_turn_by_turn(messages)
            assert messages == SHAPES[shape](seed, size)
            assert len([m for m in messages if m.get("tool_calls")]) >= size
    assert SHAPES[shape](0, 3) != SHAPES[shape](1, 3)


@pytest.mark.parametrize("shape", [s for s in SHAPES if s not in ("reused_ids", "combined")])
def test_shapes_without_reused_ids_pass_the_pairing_checker(shape):
    for messages in each(shape):
        assert check_pairing(messages).ok, check_pairing(messages)


def test_assistant_first_greets_before_the_task():
    for messages in each("assistant_first"):
        assert [m["role"] for m in messages[:3]] == ["system", "assistant", "user"]
        assert not messages[1].get("tool_calls") and text(messages[1]["content"])
    assert all(m[1]["role"] == "user" for m in each("odd_names"))  # the others do not


def test_reused_ids_reuse_an_id_in_a_later_turn():
    for messages in each("reused_ids"):
        seen, reused = set(), set()
        for made, _ in groups(messages):
            ids = {c["id"] for c in made}
            reused |= ids & seen
            seen |= ids
        assert "call_0" in reused
        assert check_pairing(messages).kind == "reused_id"


def test_parallel_reaches_twelve_calls_and_answers_out_of_order():
    for messages in each("parallel"):
        widths = [len(made) for made, _ in groups(messages)]
        assert max(widths) == MAX_PARALLEL
        for made, results in groups(messages):
            if len(made) > 1:
                assert [r["tool_call_id"] for r in results] != [c["id"] for c in made]


def test_content_parts_are_lists_of_text_parts_and_null_beside_calls():
    for messages in each("content_parts"):
        several = 0
        for m in messages:
            if m.get("tool_calls"):
                assert m["content"] is None
                continue
            assert isinstance(m["content"], list) and m["content"]
            assert all(set(p) == {"type", "text"} and p["type"] == "text" for p in m["content"])
            several += len(m["content"]) > 1
        assert several


def test_odd_names_have_dots_and_dashes():
    for messages in each("odd_names"):
        names = {c["function"]["name"] for c in calls(messages)}
        assert all("." in n or "-" in n for n in names)
    names = {c["function"]["name"] for m in each("odd_names") for c in calls(m)}
    assert any("." in n for n in names) and any("-" in n for n in names)


def test_invalid_arguments_are_not_json_and_get_an_error_result():
    for messages in each("invalid_arguments"):
        results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
        bad = 0
        for c in calls(messages):
            try:
                json.loads(c["function"]["arguments"])
            except ValueError:
                bad += 1
                assert "not valid JSON" in json.loads(results[c["id"]])["error"]
        assert bad


def test_huge_result_holds_a_mebibyte():
    for messages in each("huge_result"):
        sizes = [len(text(m["content"]).encode()) for m in messages if m["role"] == "tool"]
        assert max(sizes) >= HUGE_CHARS
        assert sum(size >= HUGE_CHARS for size in sizes) == 1


def test_long_run_has_500_messages_and_1000_identifiers_of_every_kind():
    for messages in [SHAPES["long_run"](seed, 1) for seed in SEEDS]:
        assert len(messages) >= LONG_MESSAGES
        found = identifiers(all_ids_text(messages))
        assert len(found) >= LONG_IDENTIFIERS
        assert any(len(i) > 100 and "/" in i for i in found)          # long paths
        assert any(i.startswith("https://") and "?" in i for i in found)  # URLs with queries
        assert any(i.count("-") == 4 and len(i) == 36 for i in found)  # UUIDs
        assert any(i.endswith(":5432") for i in found)                 # host:port


def test_combined_has_every_property_at_once():
    for messages in each("combined"):
        assert messages[1]["role"] == "assistant"
        assert check_pairing(messages).kind == "reused_id"
        assert max(len(made) for made, _ in groups(messages)) == MAX_PARALLEL
        assert all(m["content"] is None for m in messages if m.get("tool_calls"))
        assert all("." in c["function"]["name"] or "-" in c["function"]["name"]
                   for c in calls(messages))
        assert max(len(text(m["content"])) for m in messages if m["role"] == "tool") >= HUGE_CHARS
        assert len(messages) >= LONG_MESSAGES
        arguments = [c["function"]["arguments"] for c in calls(messages)]
        assert any(not a.startswith("{") or not a.endswith("}") for a in arguments)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(transcripts(features=[f for f in FEATURES if f not in ("huge_result", "long_run")]))
def test_any_mixture_pairs_turn_by_turn(messages):
    pairs_turn_by_turn(messages)


@pytest.mark.parametrize("seed, size, features, words", [
    ("1", 2, (), "seed must be an integer"),
    (1, 0, (), "at least 1"),
    (1, True, (), "at least 1"),
    (1, 2, ("tidy",), "unknown features ['tidy']"),
])
def test_bad_arguments_get_a_sentence(seed, size, features, words):
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        foreign_transcript(seed, size, features)


def test_a_single_feature_may_be_named_as_a_string():
    assert foreign_transcript(5, 2, "parallel") == SHAPES["parallel"](5, 2)
