"""The lab's validate_messages (solutions/agent_loop.py) and the teaching model's validator
(course/llm/validation.py) give the same verdict on every message list: valid or invalid.

Where they disagreed, the side that differed from what OpenAI's Chat Completions API accepts
was fixed (content null only on an assistant that makes calls; content a string or text parts;
tool_calls a non-empty list of {"id": str, "function": {"name": str, "arguments": str}}, only
on assistant messages; name a string; the teaching model is a text-only model, so image, audio
and refusal parts are refused, as a text-only OpenAI model refuses image parts). Neither ever
raises: the lab's answer returns sentences, the server raises only RequestError (HTTP 400).
"""
import pytest
from hypothesis import given, settings

from course.llm.server import TeachingModel
from course.llm.validation import RequestError, _validate_messages, validate_request
from solutions.agent_loop import validate_messages
from tests.solutions.message_shapes import any_messages, near_valid_lists, valid_lists

DIFFERENTIAL = settings(max_examples=2000, deadline=None, derandomize=True)


def server_accepts(messages) -> bool:
    try:
        _validate_messages(messages)
    except RequestError:
        return False
    return True


def lab_accepts(messages) -> bool:
    problems = validate_messages(messages)
    assert isinstance(problems, list) and all(isinstance(p, str) and p for p in problems), problems
    return problems == []


@DIFFERENTIAL
@given(any_messages)
def test_the_lab_and_the_server_give_the_same_verdict(messages):
    assert lab_accepts(messages) == server_accepts(messages), (validate_messages(messages), messages)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(valid_lists())
def test_generated_valid_lists_are_valid_for_both(messages):
    assert lab_accepts(messages) and server_accepts(messages), validate_messages(messages)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(near_valid_lists())
def test_the_teaching_model_answers_every_list_it_accepts(messages):
    """A list the validator lets through is answered (a crash there would be an HTTP 500)."""
    body = {"model": "teaching-model", "messages": messages}
    try:
        validate_request(body)
    except RequestError:
        return
    reply = TeachingModel().complete(body)
    assert reply["choices"][0]["message"]["role"] == "assistant"


CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
USER = {"role": "user", "content": "Find the log."}


@pytest.mark.parametrize("messages", [
    # the shapes issue 25 found: a TypeError in the lab's answer, or [] for a list refused
    [USER, {"role": "assistant", "content": None, "tool_calls": 5}],
    [USER, {"role": "assistant", "content": None, "tool_calls": [{**CALL, "id": ["call_1"]}]}],
    [USER, {"role": "assistant", "content": None, "tool_calls": [CALL]},
     {"role": "tool", "tool_call_id": ["call_1"], "content": "x"}],
    [{"role": "user", "content": 5}],
    [USER, {"role": "assistant", "content": None, "tool_calls": [CALL]},
     {"role": "tool", "tool_call_id": "call_1", "content": None}],
    [USER, {"role": "assistant", "content": None,
            "tool_calls": [{**CALL, "function": {"name": "f", "arguments": {"path": "a"}}}]},
     {"role": "tool", "tool_call_id": "call_1", "content": "x"}],
    [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://a/b.png"}}]}],
    [{"role": "user", "content": "hi", "name": 7}],
    [{"role": ["user"], "content": "hi"}],
    [USER, {"role": "assistant", "content": "done", "tool_calls": []}],
    [USER, {"role": "assistant"}],
    # tool_calls on a user or tool message: the teaching model answered 500
    [{"role": "user", "content": "hi", "tool_calls": 5}],
    [{"role": "user", "content": "hi", "tool_calls": [CALL]},
     {"role": "tool", "tool_call_id": "call_1", "content": "x"}],
    [USER, {"role": "assistant", "content": None, "tool_calls": [CALL]},
     {"role": "tool", "tool_call_id": "call_1", "content": "x", "tool_calls": 5}],
])
def test_each_shape_is_refused_by_both_in_a_sentence(messages):
    problems = validate_messages(messages)
    assert problems and all(isinstance(p, str) for p in problems)
    with pytest.raises(RequestError):
        validate_request({"model": "teaching-model", "messages": messages})
