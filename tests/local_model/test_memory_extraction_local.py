"""Chapter 17's extraction on the local real model: the library's request (the memory_records
schema as response_format) is decoded under a grammar, so even SmolLM2-135M returns the schema's
JSON, read by the same code as the teaching model's; and code refuses secrets whatever it returns.
What the model's records are worth is measured, not asserted: data/memory/real_extraction.json."""
import json

import jsonschema
import pytest

from course.givens.memory import SAMPLE_SESSION
from course.llm.memory import RECORDS_SCHEMA
from course.llm.validation import RequestError
from lesson_support.memory.extraction import ask_for_memories, records_of
from solutions.memory import filter_records


def test_the_schema_makes_a_small_model_return_memory_records(local, local_client):
    reply = ask_for_memories(SAMPLE_SESSION.messages, local_client, local.model_name)
    jsonschema.validate(json.loads(reply.content), RECORDS_SCHEMA)
    assert len(reply.candidates) + len(reply.rejected) == len(json.loads(reply.content)["memories"])
    users = {i for i, m in enumerate(SAMPLE_SESSION.messages) if m["role"] == "user"}
    assert all(c["message"] in users for c in reply.candidates)
    kept, _ = filter_records(records_of(SAMPLE_SESSION, reply.candidates), SAMPLE_SESSION.user)
    assert not any("sk-test" in r.value + r.text for r in kept)


def test_response_format_becomes_the_bindings_or_a_400(local):
    body = {"model": local.model_name, "messages": [{"role": "user", "content": "hi"}]}
    schema = {"type": "object"}
    assert local.engine._arguments({**body, "response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "schema": schema}}})["response_format"] == {"type": "json_object", "schema": schema}
    assert local.engine._arguments({**body, "response_format": {"type": "json_object"}})["response_format"] == {
        "type": "json_object"}
    for wrong in ({"type": "xml"}, {"type": "json_schema"}, "json"):
        with pytest.raises(RequestError):
            local.engine._arguments({**body, "response_format": wrong})
