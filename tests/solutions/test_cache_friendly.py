"""Chapter 05, lab exercise 3: a cache-friendly request (solutions/costs/cache_friendly.py).

The property that matters: a request built from the previous one's messages plus new ones
begins, token for token, with everything the previous request sent but its generation prompt,
whatever the time and whatever order the tools arrive in.
"""
import copy
import json
import random
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from course.llm.template import encoding, prompt_token_ids
from lesson_support.cache_experiment import SYSTEM_PROMPT, TASK, TOOLS, scripted_steps
from solutions.costs import cache_friendly_request, stable_tools

NOW = datetime(2026, 9, 14, 10, 30, 45, 123456)
# <|im_start|> "assistant\n": the request's last tokens, which ask for the reply; the next
# request continues with its own messages there, so they are never part of the shared prefix.
GENERATION_PROMPT_TOKENS = 1 + len(encoding().encode_ordinary("assistant\n"))


def step_messages(step):
    call = {"id": step.call_id, "type": "function",
            "function": {"name": step.tool, "arguments": json.dumps(step.arguments)}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": step.call_id, "content": step.result}]


def shuffled_keys(value, rng: random.Random):
    """The same JSON value with every object's keys in a random order (lists keep theirs)."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {key: shuffled_keys(value[key], rng) for key in keys}
    if isinstance(value, list):
        return [shuffled_keys(item, rng) for item in value]
    return value


def shared_prefix(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


# --------------------------------------------------------------------------- the tools

def test_stable_tools_sorts_keys_at_every_depth_and_orders_by_name():
    tools = stable_tools(TOOLS)
    assert [t["function"]["name"] for t in tools] == ["read_file", "run_command", "search_code",
                                                      "write_file"]
    for tool in tools:
        assert list(tool) == sorted(tool)
        assert list(tool["function"]) == sorted(tool["function"])
        properties = tool["function"]["parameters"]["properties"]
        assert list(properties) == sorted(properties)
    # lists keep their order: "required" is data, not a key order
    write = tools[-1]["function"]["parameters"]["required"]
    assert write == ["path", "start_line", "end_line", "text"]


@settings(max_examples=50, deadline=None)
@given(st.permutations(range(len(TOOLS))), st.randoms(use_true_random=False))
def test_the_same_tools_in_any_order_give_the_same_bytes(order, rng):
    given_tools = [shuffled_keys(TOOLS[i], rng) for i in order]
    assert json.dumps(stable_tools(given_tools)) == json.dumps(stable_tools(TOOLS))


def test_stable_tools_keeps_every_tool_and_is_idempotent():
    tools = stable_tools(TOOLS)
    assert sorted(map(json.dumps, tools)) == sorted(json.dumps(t, sort_keys=True) for t in TOOLS)
    assert stable_tools(tools) == tools


def test_tools_with_one_name_still_have_one_order():
    a = {"type": "function", "function": {"name": "f", "description": "one"}}
    b = {"type": "function", "function": {"name": "f", "description": "two"}}
    assert json.dumps(stable_tools([a, b])) == json.dumps(stable_tools([b, a]))


# --------------------------------------------------------------------------- the messages

def test_the_request_is_system_then_history_then_one_timed_user_message():
    history = [{"role": "user", "content": TASK}] + step_messages(scripted_steps(1)[0])
    messages, tools = cache_friendly_request(SYSTEM_PROMPT, TOOLS, history, NOW, "Continue.")
    assert messages[0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert messages[1:-1] == history
    assert messages[-1] == {"role": "user",
                            "content": "Current time: 2026-09-14 10:30:45\n\nContinue."}
    assert tools == stable_tools(TOOLS)


def test_only_the_last_message_moves_with_the_time():
    history = [{"role": "user", "content": TASK}]
    now, later = (cache_friendly_request(SYSTEM_PROMPT, TOOLS, history, t, "Go.")[0]
                  for t in (NOW, NOW + timedelta(hours=5, seconds=1)))
    assert now[:-1] == later[:-1] and now[-1] != later[-1]
    assert "15:30:46" in later[-1]["content"]


def test_nothing_given_is_changed_and_nothing_returned_is_shared():
    history = [{"role": "user", "content": TASK}] + step_messages(scripted_steps(1)[0])
    tools = list(reversed(TOOLS))
    before = copy.deepcopy((history, tools))
    messages, sent_tools = cache_friendly_request(SYSTEM_PROMPT, tools, history, NOW, "Go.")
    assert (history, tools) == before and [t["function"]["name"] for t in tools] == \
        [t["function"]["name"] for t in reversed(TOOLS)]
    messages[1]["content"] = "edited"
    sent_tools[0]["function"]["name"] = "edited"
    assert history == before[0] and tools == before[1]


def test_arguments_go_back_exactly_as_written():
    history = step_messages(scripted_steps(1)[0])
    history[0]["tool_calls"][0]["function"]["arguments"] = '{"timeout_s":600,  "command":"make"}'
    messages, _ = cache_friendly_request(SYSTEM_PROMPT, TOOLS, history, NOW, "Go.")
    sent = messages[1]["tool_calls"][0]["function"]["arguments"]
    assert sent == '{"timeout_s":600,  "command":"make"}'


def test_a_system_prompt_that_is_not_text_is_refused():
    with pytest.raises(TypeError, match="system prompt as a string"):
        cache_friendly_request([{"role": "system", "content": "x"}], TOOLS, [], NOW, "Go.")


# --------------------------------------------------------------------------- the prefix property

texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)


def tool_step(i: int, arguments: str, result: str) -> list[dict]:
    """A tool call (its arguments any string, as a model may write) and its result."""
    call = {"id": f"call_{i}", "type": "function",
            "function": {"name": "read_file", "arguments": arguments}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": result}]


turns = st.one_of(st.builds(lambda t: [{"role": "user", "content": t}], texts),
                  st.builds(lambda t: [{"role": "assistant", "content": t}], texts),
                  st.builds(tool_step, st.integers(0, 999), texts, texts))
messages_strategy = st.lists(turns, max_size=5).map(lambda groups: [m for g in groups for m in g])


@settings(max_examples=60, deadline=None)
@given(messages_strategy, messages_strategy, texts, texts,
       st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)),
       st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=3)),
       st.permutations(range(len(TOOLS))))
def test_the_next_request_begins_with_all_of_this_one_but_its_generation_prompt(
        history, new_steps, first_turn, next_turn, now, wait, order):
    first, tools = cache_friendly_request(SYSTEM_PROMPT, TOOLS, history, now, first_turn)
    second, later_tools = cache_friendly_request(SYSTEM_PROMPT, [TOOLS[i] for i in order],
                                                 first[1:] + new_steps, now + wait, next_turn)
    assert second[:len(first)] == first
    ids, next_ids = prompt_token_ids(first, tools), prompt_token_ids(second, later_tools)
    assert shared_prefix(ids, next_ids) >= len(ids) - GENERATION_PROMPT_TOKENS


# --------------------------------------------------------------------------- on the teaching model

def test_the_teaching_model_caches_the_second_call_and_not_a_timed_system_prompt():
    steps = scripted_steps(2)
    history = [{"role": "user", "content": TASK}] + step_messages(steps[0])
    later = NOW + timedelta(seconds=7)

    def pair(system_at):
        first = cache_friendly_request(system_at(NOW), TOOLS, history, NOW, "Continue.")
        second = cache_friendly_request(system_at(later), list(reversed(TOOLS)),
                                        first[0][1:] + step_messages(steps[1]), later, "Continue.")
        with course.llm.serve() as server:
            client = server.client()
            return [client.chat.completions.create(model=course.llm.MODEL_NAME, messages=m, tools=t,
                                                   max_tokens=8).usage for m, t in (first, second)]

    one, two = pair(lambda t: SYSTEM_PROMPT)
    assert one.prompt_tokens_details.cached_tokens == 0
    # all of the first call but its generation prompt, in whole 128-token blocks
    at_least = (one.prompt_tokens - GENERATION_PROMPT_TOKENS) // 128 * 128
    assert at_least <= two.prompt_tokens_details.cached_tokens <= one.prompt_tokens // 128 * 128
    _, timed = pair(lambda t: f"Current time: {t}\n{SYSTEM_PROMPT}")
    assert timed.prompt_tokens_details.cached_tokens == 0
