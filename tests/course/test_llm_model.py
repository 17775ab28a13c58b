"""The teaching model behaves like a provider where the course depends on it."""
import json

import openai
import pytest

from course.llm import template
from course.llm.cache import PrefixCache, block_keys
from course.llm.summary import identifiers

MODEL = "teaching-model"
# The textbook's Vancouver example (chapter 2, first section), as printed there.
VANCOUVER_TOOLS = [
    {"type": "function", "function": {
        "name": "get_current_time",
        "description": "Get the current date and time in a specific timezone",
        "parameters": {"type": "object", "properties": {
            "timezone": {"type": "string", "description": "Timezone name, e.g. America/Vancouver"}}}}},
    {"type": "function", "function": {
        "name": "get_weather",
        "description": "Get the current weather for a specific city",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}},
]
VANCOUVER = [
    {"role": "system", "content": "You are a helpful assistant. Use the provided tools to get "
                                  "real-time information when needed."},
    {"role": "user", "content": "What's the current time and weather in Vancouver?"},
]
RESULTS = {
    "get_current_time": '{"timezone": "America/Vancouver", "datetime": "2025-09-13T05:18:47", '
                        '"day_of_week": "Saturday"}',
    "get_weather": '{"city": "Vancouver", "temperature": 13.2, "unit": "celsius", '
                   '"conditions": "clear", "humidity": 93}',
}


def ask(client, messages, **kwargs):
    return client.chat.completions.create(model=MODEL, messages=messages, **kwargs)


def test_vancouver_plays_out_as_in_the_textbook(client):
    messages = list(VANCOUVER)
    first = ask(client, messages, tools=VANCOUVER_TOOLS).choices[0]
    assert first.finish_reason == "tool_calls"
    calls = first.message.tool_calls
    assert [(c.function.name, c.function.arguments) for c in calls] == [
        ("get_current_time", '{"timezone": "America/Vancouver"}'),
        ("get_weather", '{"city": "Vancouver", "unit": "celsius"}'),
    ]
    assert first.message.content is None and calls[0].id != calls[1].id
    messages.append(first.message.model_dump(exclude_none=True))
    messages += [{"role": "tool", "tool_call_id": c.id, "content": RESULTS[c.function.name]}
                 for c in calls]
    second = ask(client, messages, tools=VANCOUVER_TOOLS).choices[0]
    assert second.finish_reason == "stop" and not second.message.tool_calls
    assert second.message.content.startswith(
        "It's currently 5:18 AM on Saturday, September 13, 2025 in Vancouver.\n\n"
        "Weather: 13.2°C with clear skies and 93% humidity.")


def test_same_request_same_answer(server):
    a = ask(server.client(), VANCOUVER, tools=VANCOUVER_TOOLS)
    b = ask(server.client(), VANCOUVER, tools=VANCOUVER_TOOLS)
    assert a.choices[0].message == b.choices[0].message and a.id == b.id


def test_then_makes_calls_sequential(client):
    tools = VANCOUVER_TOOLS
    messages = [{"role": "user", "content": "Get the weather in Paris, then the time in Paris."}]
    first = ask(client, messages, tools=tools).choices[0].message
    assert [c.function.name for c in first.tool_calls] == ["get_weather"]
    messages += [first.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": RESULTS["get_weather"]}]
    second = ask(client, messages, tools=tools).choices[0].message
    assert [c.function.name for c in second.tool_calls] == ["get_current_time"]


def test_a_failed_call_is_retried_so_loops_need_a_limit(client):
    messages = [{"role": "user", "content": "What's the weather in Oslo?"}]
    for _ in range(3):
        reply = ask(client, messages, tools=VANCOUVER_TOOLS).choices[0].message
        assert [c.function.name for c in reply.tool_calls] == ["get_weather"]
        messages += [reply.model_dump(exclude_none=True),
                     {"role": "tool", "tool_call_id": reply.tool_calls[0].id,
                      "content": '{"error": "weather service unavailable"}'}]


def test_tool_choice_none_and_named(client):
    none = ask(client, VANCOUVER, tools=VANCOUVER_TOOLS, tool_choice="none").choices[0].message
    assert not none.tool_calls and "teaching model" in none.content
    named = ask(client, VANCOUVER, tools=VANCOUVER_TOOLS,
                tool_choice={"type": "function", "function": {"name": "get_weather"}}).choices[0].message
    assert [c.function.name for c in named.tool_calls] == ["get_weather"]


def test_chinese_request_picks_the_chinese_described_tool(client):
    tools = [{"type": "function", "function": {"name": "search_docs", "description": "搜索项目文档",
                                               "parameters": {"type": "object", "properties": {
                                                   "query": {"type": "string"}}, "required": ["query"]}}},
             {"type": "function", "function": {"name": "read_log", "description": "读取构建日志",
                                               "parameters": {"type": "object", "properties": {}}}}]
    reply = ask(client, [{"role": "user", "content": "请读取构建日志"}], tools=tools).choices[0].message
    assert [c.function.name for c in reply.tool_calls] == ["read_log"]


def count_by_hand(messages, tools=None):
    """The template docstring's formula, written out separately from template.py's code."""
    enc = template.encoding()
    total = 1 + len(enc.encode_ordinary("assistant\n"))
    if tools:
        total += 3 + len(enc.encode_ordinary("tools\n" + "\n".join(json.dumps(t, ensure_ascii=False)
                                                                    for t in tools)))
    for m in messages:
        body = m.get("content") or ""
        for c in m.get("tool_calls", []):
            body += "\n<tool_call>" + json.dumps({"id": c["id"], "name": c["function"]["name"],
                                                  "arguments": c["function"]["arguments"]},
                                                 ensure_ascii=False) + "</tool_call>"
        header = f"tool {m['tool_call_id']}" if m["role"] == "tool" else m["role"]
        total += 3 + len(enc.encode_ordinary(header + "\n" + body))
    return total


def test_prompt_tokens_follow_the_documented_template(client):
    messages = list(VANCOUVER) + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "温哥华"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "<|im_start|> is plain text here"}]
    usage = ask(client, messages, tools=VANCOUVER_TOOLS).usage
    assert usage.prompt_tokens == count_by_hand(messages, VANCOUVER_TOOLS)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def long_system(first_line="You are a careful build engineer."):
    rules = "\n".join(f"Rule {i}: keep build step {i} reproducible and log its exit code." for i in range(150))
    return [{"role": "system", "content": first_line + "\n" + rules},
            {"role": "user", "content": "What's the weather in Vancouver?"}]


def cached(client, messages, tools=None):
    usage = ask(client, messages, **({"tools": tools} if tools else {})).usage
    return usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens


def test_cache_is_a_real_prefix_match_with_openai_rules(client):
    small = [{"role": "user", "content": "hi"}]
    assert cached(client, small) == (cached(client, small)[0], 0)  # below 1024: never cached

    messages = long_system()
    prompt, hit = cached(client, messages)
    assert prompt > 2000 and hit == 0  # first time: nothing cached
    prompt2, hit2 = cached(client, messages)
    assert hit2 == (prompt // 128) * 128 and hit2 % 128 == 0  # everything up to a block boundary

    appended = messages + [{"role": "assistant", "content": "Checking."},
                           {"role": "user", "content": "And in Tokyo?"}]
    prompt3, hit3 = cached(client, appended)
    assert prompt3 > prompt and hit3 >= ((prompt - 8) // 128) * 128  # appending keeps the prefix

    edited = long_system("You are a careful build engineer!")  # first line changed
    assert cached(client, edited)[1] == 0


def test_reordering_tools_loses_the_cache(client):
    tools = [{"type": "function", "function": {
        "name": f"tool_{i}", "description": "Reads part of the build log " * 20,
        "parameters": {"type": "object", "properties": {}}}} for i in range(8)]
    messages = [{"role": "user", "content": "hello"}]
    assert cached(client, messages, tools)[1] == 0
    assert cached(client, messages, tools)[1] > 1024
    assert cached(client, messages, list(reversed(tools)))[1] == 0


def test_the_cache_belongs_to_one_model_switching_models_loses_it(client):
    # A KV cache is computed with one model's weights: the same prompt to another model hits
    # nothing (21.6.9: switching models mid-session loses the whole cache); going back hits.
    from course.llm import SMALL_WINDOW_MODEL

    messages = long_system("You are the build assistant of the model-switch test.")
    first = client.chat.completions.create(model=MODEL, messages=messages).usage
    other = client.chat.completions.create(model=SMALL_WINDOW_MODEL, messages=messages).usage
    back = client.chat.completions.create(model=MODEL, messages=messages).usage
    assert first.prompt_tokens == other.prompt_tokens > 2000
    assert first.prompt_tokens_details.cached_tokens == 0
    assert other.prompt_tokens_details.cached_tokens == 0
    assert back.prompt_tokens_details.cached_tokens == first.prompt_tokens // 128 * 128


def test_block_keys_of_two_models_share_no_block():
    tokens = list(range(512))
    a, b = block_keys(tokens, 128, "teaching-model"), block_keys(tokens, 128, "teaching-model-8k")
    assert len(a) == len(b) == 4 and not set(a) & set(b)
    assert block_keys(tokens, 128, "teaching-model") == a


def test_prefix_cache_memory_is_bounded_lru():
    cache = PrefixCache(block=4, minimum=4, capacity_blocks=3)
    cache.lookup_and_store(list(range(12)))  # three blocks
    assert len(cache) == 3 and cache.lookup_and_store(list(range(12))) == 12
    cache.lookup_and_store([9] * 8)  # two new blocks evict the two least recently used
    assert len(cache) == 3
    assert cache.lookup_and_store(list(range(12))) == 0  # its first block is gone


def test_summary_is_structured_and_keeps_identifiers(client):
    messages = [
        {"role": "system", "content": "You are a build agent. Never modify files outside /work/proj."},
        {"role": "user", "content": "Cross-compile zlib for aarch64 and fix the CMake error."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_a1", "type": "function", "function": {
                "name": "run_build", "arguments": '{"target": "aarch64-linux-gnu"}'}}]},
        {"role": "tool", "tool_call_id": "call_a1", "content":
            "Error: Could NOT find ZLIB (missing: ZLIB_LIBRARY) at /opt/sysroot/usr/lib, exit code 1"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_a2", "type": "function", "function": {
                "name": "edit_file", "arguments": '{"path": "cmake/toolchain.cmake"}'}}]},
        {"role": "tool", "tool_call_id": "call_a2", "content": "patched, commit 3f2a9c1d"},
        {"role": "user", "content": "Summarise the conversation so far for a compaction."},
    ]
    summary = ask(client, messages).choices[0].message.content
    for section in ("## Goal", "## Constraints", "## Confirmed facts", "## Changes made",
                    "## Failed attempts (and why)", "## Open items"):
        assert section in summary
    assert "Could NOT find ZLIB (missing: ZLIB_LIBRARY) at /opt/sysroot/usr/lib" in summary
    for ident in ("/work/proj", "cmake/toolchain.cmake", "3f2a9c1d", "aarch64-linux-gnu", "ZLIB_LIBRARY"):
        assert ident in summary, ident
    said = "\n".join([m.get("content") or "" for m in messages[:-1]] +
                     [c["function"]["arguments"] for m in messages for c in m.get("tool_calls", [])])
    assert [i for i in identifiers(said) if i not in summary] == []


BAD_REQUESTS = [
    ({"messages": [{"role": "user", "content": "x"}]}, "model parameter"),
    ({"model": MODEL}, "Missing required parameter: 'messages'"),
    ({"model": MODEL, "messages": "hello"}, "expected an array"),
    ({"model": MODEL, "messages": []}, "empty array"),
    ({"model": MODEL, "messages": [{"role": "robot", "content": "x"}]}, "Invalid value: 'robot'"),
    ({"model": MODEL, "messages": [{"role": "user", "content": 42}]}, "Invalid type for 'messages[0].content'"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"},
                                   {"role": "tool", "tool_call_id": "call_x", "content": "r"}]},
     "must be a response to a preceding message with 'tool_calls'"),
    ({"model": MODEL, "messages": [
        {"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                              "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "user", "content": "y"}]}, "did not have response messages: c1"),
    ({"model": MODEL, "messages": [
        {"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]},
     "Duplicate tool call id"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]},
     "tools[0].function"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "temperature": "hot"},
     "Invalid type for 'temperature'"),
]


@pytest.mark.parametrize("body,message", BAD_REQUESTS)
def test_invalid_requests_get_a_400_naming_the_problem(client, body, message):
    with pytest.raises(openai.BadRequestError) as info:
        client.post("/chat/completions", body=body, cast_to=object)
    assert message in info.value.message
    assert info.value.body["type"] == "invalid_request_error"
    # ... and the server still answers the next request.
    assert ask(client, [{"role": "user", "content": "still there?"}]).choices[0].message.content


def test_max_tokens_cuts_text_and_withholds_tool_calls_that_do_not_fit(client):
    long_ask = [{"role": "user", "content": "Please summarise: " + "the build failed again. " * 200}]
    text = ask(client, long_ask, max_tokens=20).choices[0]
    assert text.finish_reason == "length" and text.message.content
    tools = ask(client, VANCOUVER, tools=VANCOUVER_TOOLS, max_tokens=5)
    choice = tools.choices[0]
    assert choice.finish_reason == "length" and not choice.message.tool_calls
    assert tools.usage.completion_tokens == 5
