"""The teaching model's decision list: its order, the trace on every reply, tool_choice and
parallel_tool_calls, and rule 9, memory (the window is the memory: experiment 2-3)."""
import json
import re

import openai
import pytest
from openai.types.chat import ChatCompletion

import course.llm
from course.llm import policy
from course.llm.server import TeachingModel
from tests.course.test_llm_model import VANCOUVER_TOOLS
from tests.messages import tool_call as call

MODEL = "teaching-model"
TOOLS = VANCOUVER_TOOLS  # the textbook's two tools, as the model tests define them
PARIS = '{"city": "Paris", "temperature": 18, "unit": "celsius", "conditions": "cloudy"}'
TIME = '{"timezone": "America/Vancouver", "datetime": "2025-09-13T05:18:47", "day_of_week": "Saturday"}'


def ask(client, messages, **kwargs):
    return client.chat.completions.create(model=MODEL, messages=messages, **kwargs)


def rules_of(completion):
    return [step["rule"] for step in completion.model_extra["teaching_trace"]]


def names(completion):
    return [c.function.name for c in completion.choices[0].message.tool_calls or ()]


def paris_conversation(follow_up="And what was the temperature in Paris again?"):
    return [{"role": "user", "content": "What's the weather in Paris?"},
            {"role": "assistant", "content": None,
             "tool_calls": [call("c1", "get_weather", {"city": "Paris", "unit": "celsius"})]},
            {"role": "tool", "tool_call_id": "c1", "content": PARIS},
            {"role": "assistant", "content": "Weather: 18°C with cloudy skies."},
            {"role": "user", "content": follow_up}]


# ------------------------------------------------------------------ the list and the trace

def test_the_docstring_table_lists_the_rules_in_the_order_they_run():
    table = re.findall(r"^    (\d+)\s+(\w+)\s{2,}", policy.__doc__, re.M)
    assert [(int(n), name) for n, name in table] == [(n, name) for n, name, _ in course.llm.rule_table()]
    assert [r.name for r in policy.RULES][0] == "validation" and policy.RULES[-1].name == "default"
    assert all(rule.apply for rule in policy.RULES[1:])


def test_every_reply_carries_a_trace_the_sdk_can_read(client):
    completion = ask(client, [{"role": "user", "content": "What's the weather in Oslo?"}], tools=TOOLS)
    trace = completion.model_extra["teaching_trace"]
    assert trace[0]["rule"] == "validation" and trace[-1]["rule"] == "memory"
    for step in trace:
        assert set(step) == {"rule", "why", "evidence"} and step["why"]
        assert all(isinstance(i, int) and 0 <= i < 1 for i in step["evidence"])
    # The trace is top-level: the message that goes back into the history has none of it.
    message = completion.choices[0].message.model_dump(exclude_none=True)
    assert "teaching_trace" not in json.dumps(message)


def test_explain_renders_the_trace_and_says_it_is_a_simulation(client):
    completion = ask(client, paris_conversation(), tools=TOOLS)
    text = str(course.llm.explain(completion))
    assert "How the teaching model decided:" in text and "memory" in text
    assert "A real provider returns no trace" in " ".join(text.split())
    assert repr(course.llm.explain(completion)) == text  # shows as text at the end of a cell
    assert str(course.llm.explain(completion.model_dump())) == text  # a plain dict works too


def test_explain_a_completion_without_a_trace_says_so():
    real = ChatCompletion.model_validate({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-x",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "Hi"}}]})
    for completion in (real, real.model_dump(), {}):
        text = " ".join(str(course.llm.explain(completion)).split())
        assert "no teaching_trace" in text and "Real providers do not say why" in text


def test_the_same_request_gets_the_same_reply_and_trace(server):
    a = ask(server.client(), paris_conversation(), tools=TOOLS)
    b = ask(server.client(), paris_conversation(), tools=TOOLS)
    assert a.model_extra["teaching_trace"] == b.model_extra["teaching_trace"]
    assert a.choices[0].message == b.choices[0].message


def test_the_default_reply_is_unchanged(client):
    # Notebook 00 prints it: the wording is part of the course.
    text = ask(client, [{"role": "user", "content": "Hello! What are you?"}]).choices[0].message.content
    assert text == ("I am the course's teaching model: a small rule-based stand-in for an LLM, not "
                    "a real one. I call the tools a request gives me, answer from their results, "
                    "and summarise a conversation when asked. You said: \"Hello! What are you?\"")


def test_max_tokens_is_in_the_trace(client):
    completion = ask(client, [{"role": "user", "content": "What's the weather in Oslo?"}],
                     tools=TOOLS, max_tokens=3)
    assert completion.choices[0].finish_reason == "length" and rules_of(completion)[-1] == "max_tokens"


# ------------------------------------------------------------------ rule 2: tool_choice

def test_required_beats_the_summary_rule(client):
    messages = [{"role": "user", "content": "Summarise the conversation so far."}]
    auto = ask(client, messages, tools=TOOLS)
    assert auto.choices[0].message.content.startswith("Summary of the conversation")
    forced = ask(client, messages, tools=TOOLS, tool_choice="required")
    assert forced.choices[0].finish_reason == "tool_calls" and names(forced)
    assert "summary" in rules_of(forced) and rules_of(forced)[-1] == "required"


def test_required_calls_even_when_the_answer_is_visible(client):
    completion = ask(client, paris_conversation(), tools=TOOLS, tool_choice="required")
    assert names(completion) == ["get_weather"]


def test_a_weather_summary_is_a_tool_call_not_a_conversation_summary(client):
    for choice in ("required", "auto"):
        completion = ask(client, [{"role": "user", "content": "Give me a weather summary for Paris"}],
                         tools=TOOLS, tool_choice=choice)
        assert names(completion) == ["get_weather"]
        args = json.loads(completion.choices[0].message.tool_calls[0].function.arguments)
        assert args["city"] == "Paris"


def test_none_means_text_even_when_a_call_is_needed(client):
    completion = ask(client, [{"role": "user", "content": "What's the weather in Oslo?"}],
                     tools=TOOLS, tool_choice="none")
    assert not names(completion) and completion.choices[0].finish_reason == "stop"
    assert any("\"none\"" in step["why"] for step in completion.model_extra["teaching_trace"])


def test_a_named_function_is_exactly_that_call(client):
    named = {"type": "function", "function": {"name": "get_current_time"}}
    completion = ask(client, paris_conversation(), tools=TOOLS, tool_choice=named)
    assert names(completion) == ["get_current_time"] and rules_of(completion)[-1] == "tool_choice"


def test_parallel_tool_calls_false_makes_one_call_per_reply(client):
    messages = [{"role": "user", "content": "What's the current time and weather in Vancouver?"}]
    assert names(ask(client, messages, tools=TOOLS)) == ["get_current_time", "get_weather"]
    for expected in (["get_current_time"], ["get_weather"]):
        reply = ask(client, messages, tools=TOOLS, parallel_tool_calls=False)
        assert names(reply) == expected
        message = reply.choices[0].message
        messages += [message.model_dump(exclude_none=True),
                     {"role": "tool", "tool_call_id": message.tool_calls[0].id,
                      "content": TIME if expected == ["get_current_time"] else PARIS}]
    final = ask(client, messages, tools=TOOLS, parallel_tool_calls=False)
    assert not names(final) and "5:18 AM" in final.choices[0].message.content


def test_parallel_tool_calls_must_be_a_boolean(client):
    with pytest.raises(openai.BadRequestError, match="parallel_tool_calls"):
        ask(client, [{"role": "user", "content": "hi"}], parallel_tool_calls="no")


# ------------------------------------------------------------------ rule 9: memory is the window

def test_a_follow_up_is_answered_from_the_result_still_in_the_window(client):
    completion = ask(client, paris_conversation(), tools=TOOLS)
    assert not names(completion)
    assert "18°C" in completion.choices[0].message.content
    step = completion.model_extra["teaching_trace"][-1]
    assert step["rule"] == "memory" and 2 in step["evidence"]


def test_a_result_cut_away_by_a_window_is_fetched_again(client):
    # Experiment 2-3: a sliding window that dropped the first turn makes the agent repeat the call.
    window = paris_conversation()[-1:]
    completion = ask(client, window, tools=TOOLS)
    assert names(completion) == ["get_weather"]
    assert json.loads(completion.choices[0].message.tool_calls[0].function.arguments)["city"] == "Paris"


def test_a_lossy_summary_that_dropped_the_result_makes_it_call_again(client):
    summary = {"role": "user", "content": "[Compacted history] The user asked about Paris; the "
                                          "weather tool was called."}
    completion = ask(client, [summary, paris_conversation()[-1]], tools=TOOLS)
    assert names(completion) == ["get_weather"]


def test_a_result_for_other_arguments_does_not_answer(client):
    completion = ask(client, paris_conversation("And the weather in Lyon?"), tools=TOOLS)
    assert names(completion) == ["get_weather"]
    assert json.loads(completion.choices[0].message.tool_calls[0].function.arguments)["city"] == "Lyon"


def test_an_error_result_is_not_an_answer(client):
    messages = paris_conversation()
    messages[2] = {"role": "tool", "tool_call_id": "c1", "content": '{"error": "service down"}'}
    assert names(ask(client, messages, tools=TOOLS)) == ["get_weather"]


def test_without_tools_a_visible_result_still_answers(client):
    completion = ask(client, paris_conversation())
    assert "18°C" in completion.choices[0].message.content
    assert rules_of(completion)[-1] == "memory"


def test_decisions_need_nothing_but_the_request():
    # Two fresh models (nothing shared) give identical replies: no state outside the request.
    body = {"model": MODEL, "messages": paris_conversation(), "tools": TOOLS}
    a, b = TeachingModel().complete(body), TeachingModel().complete(json.loads(json.dumps(body)))
    assert a["choices"] == b["choices"] and a["teaching_trace"] == b["teaching_trace"]


# ------------------------------------------------------------------ rules 5 and 11

def test_a_failed_call_is_made_again_verbatim(client):
    # The request alone would plan other arguments: the retry repeats the failed call itself.
    messages = [{"role": "user", "content": "Is it raining?"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": '{"error": "timeout"}'}]
    completion = ask(client, messages, tools=TOOLS)
    assert [(c.function.name, c.function.arguments) for c in completion.choices[0].message.tool_calls] \
        == [("get_weather", '{"city":"Oslo"}')]
    assert rules_of(completion)[-1] == "retry_failed"


def test_results_of_this_turn_answer_when_the_request_plans_nothing(client):
    messages = [{"role": "user", "content": "Check it please."},
                {"role": "assistant", "content": None,
                 "tool_calls": [call("c1", "get_weather", {"city": "Paris"})]},
                {"role": "tool", "tool_call_id": "c1", "content": PARIS}]
    completion = ask(client, messages, tools=TOOLS)
    assert completion.choices[0].message.content.startswith("Weather: 18°C")
    assert rules_of(completion)[-1] == "results"
