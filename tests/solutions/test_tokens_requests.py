"""Chapter 02: request counting on generated requests, with openai SDK message objects among
them, against the server's own template; and the two costs issue 35 (item 7) removed."""
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai import BaseModel as SDKModel
from openai.types.chat import ChatCompletionMessage

from course.llm import template
from solutions import tokens as T

# Text that exercises JSON escaping and the tokenizer: quotes, backslashes, control characters,
# line separators, CJK, emoji and special-token look-alikes.
TEXT = st.text(alphabet=st.one_of(st.characters(codec="utf-8"),
                                  st.sampled_from('"\\\n\t\x00\u2028交叉编译🎉 {}:')),
               max_size=24) | st.sampled_from(["", "<|im_start|>", "<|endoftext|>"])
NAME = st.none() | st.sampled_from(["policy", "lin_wei", "用户"])


@st.composite
def tool_calls(draw, sdk: bool):
    calls = []
    for j in range(draw(st.integers(0, 3))):
        function = {"name": draw(TEXT), "arguments": draw(TEXT)}
        if not sdk and draw(st.booleans()):
            del function["name"]  # a dict may leave the name out: it is written as null
        call_id = draw(TEXT) if sdk else draw(TEXT | st.none() | st.integers(-5, 10**12))
        calls.append({"id": call_id, "type": "function", "function": function})
    return calls


@st.composite
def messages(draw):
    """(the request's messages, the same messages as plain dicts, as the old code saw them)."""
    sent, plain = [], []
    for _ in range(draw(st.integers(0, 6))):
        role = draw(st.sampled_from(["system", "developer", "user", "assistant", "tool"]))
        if role == "tool":
            message = {"role": "tool", "tool_call_id": draw(TEXT), "content": draw(TEXT)}
        elif role == "assistant":
            sdk = draw(st.booleans())
            message = {"role": "assistant", "content": draw(TEXT | st.none()),
                       "tool_calls": draw(tool_calls(sdk))}
            if draw(NAME):
                message["name"] = draw(NAME)  # an extra field of the SDK's object
            if sdk:
                obj = ChatCompletionMessage.model_validate(message)
                sent.append(obj)
                plain.append(obj.model_dump(exclude_none=True))  # what the old code read
                continue
        else:
            content = draw(TEXT | st.none() | st.lists(
                st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), max_size=3))
            message = {"role": role, "content": content}
            if draw(NAME):
                message["name"] = draw(NAME)
        sent.append(message)
        plain.append(message)
    return sent, plain


TOOLS = st.none() | st.lists(st.fixed_dictionaries({
    "type": st.just("function"),
    "function": st.fixed_dictionaries({"name": TEXT, "description": TEXT,
                                       "parameters": st.just({"type": "object"})})}),
    max_size=2)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(messages(), TOOLS)
def test_count_equals_the_server_template_on_generated_requests(request_messages, tools):
    """The server renders with json.dumps per call and reads dicts: the way the counting worked
    before issue 35. The faster counting must give the same text and the same count."""
    sent, plain = request_messages
    assert T.render_request(sent, tools) == template.render_text(plain, tools)
    count = T.count_request_tokens(sent, tools)
    assert count == len(template.prompt_token_ids(plain, tools))
    assert count == T.count_request_tokens(plain, tools) == len(T.request_token_ids(sent, tools))


def _tool_heavy_request(sdk: bool):
    messages = [{"role": "user", "content": "read the sources"}]
    for i in range(20):
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{i}_{j}", "type": "function", "function": {
                "name": "read_file", "arguments": json.dumps({"path": f"src/文件_{i}_{j}.c"})}}
            for j in range(3)]}
        messages.append(ChatCompletionMessage.model_validate(message) if sdk else message)
        messages.extend({"role": "tool", "tool_call_id": f"call_{i}_{j}", "content": "ok"}
                        for j in range(3))
    return messages


def test_counting_builds_no_json_encoder_per_tool_call(monkeypatch):
    """json.dumps(..., ensure_ascii=False) built an encoder for each of the 60 calls here: that
    was most of the 1.3x over raw tiktoken on tool-heavy requests."""
    built = []

    class CountingEncoder(json.JSONEncoder):
        def __init__(self, *args, **kwargs):
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(json, "JSONEncoder", CountingEncoder)
    expected = len(template.prompt_token_ids(_tool_heavy_request(sdk=False)))
    built.clear()
    assert T.count_request_tokens(_tool_heavy_request(sdk=False)) == expected
    assert built == []


def test_counting_sdk_messages_reads_them_without_dumping_them(monkeypatch):
    """model_dump copied every SDK message (and its calls) on every count: 1.5x raw tiktoken."""
    plain = _tool_heavy_request(sdk=False)
    sent = _tool_heavy_request(sdk=True)

    def refuse(self, *args, **kwargs):
        raise AssertionError(f"{type(self).__name__}.model_dump was called")

    monkeypatch.setattr(SDKModel, "model_dump", refuse)
    assert T.count_request_tokens(sent) == T.count_request_tokens(plain)


@pytest.mark.parametrize("messages, words", [
    ([{"role": "assistant", "tool_calls": ["call"]}], "messages[0].tool_calls[0] must be a dict"),
    ([{"role": "assistant", "tool_calls": [{"id": "c", "function": "f"}]}],
     "messages[0].tool_calls[0].function must be a dict"),
    ([{"role": "user", "content": ["part"]}], "messages[0].content[0] must be a dict"),
    ([{"role": "user", "content": "hi"}, 7], "messages[1] must be a dict, not int"),
])
def test_parts_that_are_not_dicts_are_named(messages, words):
    with pytest.raises(TypeError) as info:
        T.count_request_tokens(messages)
    assert words in str(info.value)


def test_a_tool_definition_that_is_not_a_dict_is_named():
    with pytest.raises(TypeError, match=r"tools\[1\] must be a dict"):
        T.count_request_tokens([], [{"type": "function", "function": {"name": "f"}}, "g"])
