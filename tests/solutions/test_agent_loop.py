"""Chapter 01: the agent loop and the message validator (the step-through widget is tested in
tests/lesson_support/test_agent_loop_widget.py)."""
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from solutions.agent_loop import run_agent, validate_messages
from tests.messages import tool_call
from tests.course.test_llm_model import RESULTS, VANCOUVER, VANCOUVER_TOOLS


def execute(name, arguments):
    return RESULTS[name]


def test_run_agent_vancouver(client):
    start = list(VANCOUVER)
    run = run_agent(client, start, VANCOUVER_TOOLS, execute, max_iterations=5)
    assert start == VANCOUVER  # the caller's list is untouched
    assert run["outcome"] == "answered" and run["api_calls"] == 2
    assert [m["role"] for m in run["messages"]] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert "5:18 AM" in run["text"]
    assert validate_messages(run["messages"]) == []


def test_run_agent_stops_at_the_limit_and_survives_raising_tools(client):
    def down(name, arguments):
        raise TimeoutError("service down")

    run = run_agent(client, VANCOUVER, VANCOUVER_TOOLS, down, max_iterations=3)
    assert (run["outcome"], run["text"], run["api_calls"]) == ("max_iterations", None, 3)
    errors = [json.loads(m["content"]) for m in run["messages"] if m["role"] == "tool"]
    assert errors and all(e == {"error": "TimeoutError: service down"} for e in errors)
    assert validate_messages(run["messages"]) == []


def test_run_agent_reports_bad_arguments_to_the_model():
    class FakeCompletions:
        def __init__(self):
            self.calls = 0

        def create(self, model, messages, **kwargs):
            from openai.types.chat import ChatCompletion

            self.calls += 1
            message = ({"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{not json"}}]}
                if self.calls == 1 else {"role": "assistant", "content": "done"})
            return ChatCompletion.model_validate({
                "id": "x", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}]})

    class FakeClient:
        class chat:
            completions = FakeCompletions()

    run = run_agent(FakeClient, [{"role": "user", "content": "go"}], [], lambda n, a: "never",
                    max_iterations=3, model="fake")
    assert run["outcome"] == "answered"
    assert "not valid JSON" in json.loads(run["messages"][2]["content"])["error"]


def test_validate_messages_finds_each_kind_of_problem():
    assert validate_messages("nope") == ["messages must be a list, not str"]
    assert validate_messages([]) == ["messages is empty: a request needs at least one message"]
    problems = validate_messages([
        {"role": "wizard", "content": "x"},                                  # 0 bad role
        {"role": "tool", "tool_call_id": "ghost", "content": "r"},           # 1 orphan
        {"role": "assistant", "tool_calls": [tool_call("a"), tool_call("b")]},  # 2 calls
        {"role": "tool", "tool_call_id": "b", "content": "r"},               # 3 answers b
        {"role": "user", "content": "next"},                                 # 4 closes a unanswered
        {"role": "tool", "tool_call_id": "a", "content": "late"},            # 5 out of order
        {"role": "assistant", "tool_calls": [tool_call("b")]},               # 6 reused id
    ])
    assert len(problems) == 6
    assert "messages[0]" in problems[0] and "wizard" in problems[0]
    assert "messages[1]" in problems[1] and "orphan" in problems[1]
    assert "'a'" in problems[2] and "messages[4]" in problems[2]
    assert "messages[5]" in problems[3] and "out of order" in problems[3]
    assert "messages[6]" in problems[4] and "reuses" in problems[4]
    assert "messages[6]" in problems[5] and "list ends" in problems[5]


@st.composite
def valid_histories(draw):
    """Random valid conversations: turns of parallel calls answered in any order."""
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]
    n = 0
    for _ in range(draw(st.integers(0, 5))):
        ids = [f"call_{n + k}" for k in range(draw(st.integers(1, 4)))]
        n += len(ids)
        messages.append({"role": "assistant", "content": None, "tool_calls": [tool_call(i) for i in ids]})
        messages += [{"role": "tool", "tool_call_id": i, "content": "ok"} for i in draw(st.permutations(ids))]
        if draw(st.booleans()):
            messages.append({"role": "user", "content": "more"})
    return messages


@settings(max_examples=60, derandomize=True)
@given(valid_histories(), st.data())
def test_valid_histories_pass_and_dropping_a_call_is_caught(messages, data):
    assert validate_messages(messages) == []
    with_calls = [i for i, m in enumerate(messages) if m.get("tool_calls")]
    if with_calls:
        drop = data.draw(st.sampled_from(with_calls))
        broken = messages[:drop] + messages[drop + 1:]
        assert any("orphan" in p for p in validate_messages(broken))

