"""Extraction through the openai SDK: the teaching model's server answers a memory_records request
with its documented rule (course/llm/memory.py), and the library reads any model's reply the same
way (lesson_support/memory/extraction.py)."""
import json

import pytest

import course.llm
from course.givens.memory import SAMPLE_SESSION, Session, utc
from course.llm.memory import ACCUMULATING, RULES, asks_for_memories, transcript
from lesson_support.memory import extract, extract_and_filter, generate
from lesson_support.memory.extraction import read_reply, request


@pytest.fixture(scope="module")
def teaching():
    with course.llm.serve() as server:
        yield server.client()


def test_the_teaching_models_server_extracts_by_its_rule(teaching):
    sessions = [SAMPLE_SESSION] + [s for history in generate()[:3] for s in history.sessions]
    for session in sessions:
        assert extract(session, teaching, course.llm.MODEL_NAME) == extract(session), session.id
    assert sum(len(extract(s)) for s in sessions) > len(sessions)   # the sessions say things
    kept, refused = extract_and_filter(SAMPLE_SESSION, teaching, course.llm.MODEL_NAME)
    assert [r.key for r in kept] == ["city", "editor", "decision:database", "trip"]
    assert [reason for _, reason in refused] == ["credential", "other_person"]


def test_the_reply_is_the_schemas_json_and_the_trace_names_the_rule(teaching):
    reply = teaching.chat.completions.create(**request(SAMPLE_SESSION.messages, course.llm.MODEL_NAME))
    memories = json.loads(reply.choices[0].message.content)["memories"]
    assert memories[0] == {"kind": "fact", "key": "city", "value": "Lyon", "message": 0, "text": "I live in Lyon."}
    assert [m["message"] for m in memories] == [0, 0, 2, 3, 4, 5]
    assert [step["rule"] for step in reply.model_extra["teaching_trace"]][-1] == "memory_extraction"


def test_only_the_schema_named_memory_records_asks_for_the_rule(teaching):
    body = request(SAMPLE_SESSION.messages, course.llm.MODEL_NAME)
    assert asks_for_memories(body)
    other = {**body, "response_format": {"type": "json_schema", "json_schema": {"name": "other", "schema": {}}}}
    assert not asks_for_memories(other) and not asks_for_memories({**body, "response_format": {"type": "json_object"}})
    reply = teaching.chat.completions.create(**other)
    assert "memory_extraction" not in [step["rule"] for step in reply.model_extra["teaching_trace"]]


def test_a_reply_is_read_against_the_transcript():
    messages = SAMPLE_SESSION.messages
    good = {"kind": "fact", "key": "city", "value": "Lyon", "message": 0, "text": "I live in Lyon."}
    read = read_reply(json.dumps({"memories": [
        good, {**good, "message": 1}, {**good, "message": 99}, {**good, "kind": "opinion"},
        {**good, "value": " "}, {**good, "key": "trip", "text": ""}, "Lyon"]}), messages)
    assert [c["key"] for c in read.candidates] == ["city", "trip"]
    assert read.candidates[0]["single"] and not read.candidates[1]["single"]
    assert read.candidates[1]["text"] == "Lyon"   # no sentence copied: the value stands for it
    assert [why for _, why in read.rejected] == [
        "message 1 is not the user's", "message is not the number of a message of the transcript",
        "kind is not one of fact, preference, decision, open_item", "value is not a non-empty string",
        "not an object"]
    for bad in ('{"memories": [', "I live in Lyon.", '{"records": []}', '{"memories": {}}'):
        with pytest.raises(ValueError, match="memory_records"):
            read_reply(bad, messages)


def test_a_model_needs_its_name_and_a_transcript_round_trips():
    with pytest.raises(ValueError, match="model's name"):
        extract(SAMPLE_SESSION, client=object())
    session = Session("u09-s1", "u09", utc(2026, 2, 1), ({"role": "user", "content": "I live in Oslo.\nMy dog is Rex."},))
    lines = [json.loads(line) for line in transcript(session.messages).splitlines()]
    assert lines == [{"message": 0, "role": "user", "content": "I live in Oslo.\nMy dog is Rex."}]


def test_the_accumulating_keys_are_the_rules_many_rows():
    fixed = [(key, single) for _, _, key, single in RULES if key not in (None, "decision")]
    assert {key for key, single in fixed if not single} == set(ACCUMULATING)
    assert all(single for key, single in fixed if key not in ACCUMULATING)
