"""Chapter 01's step-through widget (lesson_support/widgets/agent_loop.py): its logic and its
controls, on the lesson's two runs — the happy path and the stuck run the limit stops."""
import pytest

from lesson_support.widgets.agent_loop import (agent_stepper, as_runs, move, record_run,
                                               repeated_calls, run_outcome, step_html,
                                               step_summary)
from tests.messages import tool_call as call
from tests.course.test_llm_model import RESULTS, VANCOUVER, VANCOUVER_TOOLS


def execute(name, arguments):
    return RESULTS[name]


def broken_weather(name, arguments):
    if name == "get_weather":
        raise ConnectionError("weather service unavailable")
    return RESULTS[name]


@pytest.fixture
def runs(client):
    return {"happy path": record_run(client, VANCOUVER, VANCOUVER_TOOLS, execute),
            "stuck run": record_run(client, VANCOUVER, VANCOUVER_TOOLS, broken_weather,
                                    max_iterations=4)}


def test_the_happy_path_records_each_call(runs):
    steps = runs["happy path"]
    assert len(steps) == 2
    assert [len(s["request"]) for s in steps] == [2, 5]
    assert steps[1]["prompt_tokens"] > steps[0]["prompt_tokens"]
    assert step_summary(steps, 0).startswith("API call 1 of 2: sent 2 messages")
    assert step_summary(steps, 1).endswith("got back the final answer")
    assert run_outcome(steps) == "answered after 2 API calls"
    page = step_html(steps, 0)
    assert "get_current_time" in page and "get_weather" in page
    assert not any(repeated_calls(s) for s in steps)
    assert "repeats an earlier call" not in step_html(steps, 0)


def test_the_stuck_run_repeats_its_call_until_the_limit(runs):
    steps = runs["stuck run"]
    assert len(steps) == 4
    assert [len(s["request"]) for s in steps] == [2, 5, 7, 9]  # each retry adds a call and its error
    assert [len(repeated_calls(s)) for s in steps] == [0, 1, 1, 1]
    assert run_outcome(steps) == "stopped by the iteration limit after 4 API calls, still asking for tools"
    assert step_summary(steps, 1).endswith("got back 1 tool call(s), 1 of them repeating an earlier call")
    assert step_summary(steps, 3).endswith("; the limit stops the run here")
    assert "repeats an earlier call" in step_html(steps, 1)
    assert "weather service unavailable" in step_html(steps, 3)


def test_a_repeat_is_the_same_tool_and_arguments_under_a_new_id():
    history = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": None, "tool_calls": [call("a", "f", '{"x": 1}')]},
               {"role": "tool", "tool_call_id": "a", "content": "error"}]
    reply = {"role": "assistant", "content": None,
             "tool_calls": [call("b", "f", '{"x": 1}'), call("c", "f", '{"x": 2}'), call("d", "g", '{"x": 1}')]}
    assert repeated_calls({"request": history, "reply": reply}) == ["b"]
    assert repeated_calls({"request": history, "reply": {"role": "assistant", "content": "done"}}) == []


def test_outcome_and_moves_are_plain_arithmetic():
    assert run_outcome([]) == "no API calls"
    one = [{"request": [], "reply": {"role": "assistant", "content": "hi"}}]
    assert run_outcome(one) == "answered after 1 API call"
    assert [move(0, -1, 4), move(0, 1, 4), move(3, 1, 4), move(2, -1, 4)] == [0, 1, 3, 1]


def test_runs_are_named_and_empty_ones_refused():
    steps = [{"request": [], "reply": {}}]
    assert as_runs(steps) == {"run": steps}
    assert list(as_runs({"b": steps, "a": steps})) == ["b", "a"]  # the caller's order is kept
    with pytest.raises(ValueError, match="no runs given"):
        as_runs({})
    with pytest.raises(ValueError, match="'stuck run' recorded no API calls"):
        as_runs({"stuck run": []})


def controls(widget):
    (choice, outcome), (prev_button, next_button, label), view = (
        widget.children[0].children, widget.children[1].children, widget.children[2])
    return choice, outcome, prev_button, next_button, label, view


def test_choosing_the_stuck_run_changes_the_view_and_starts_at_its_first_call(runs):
    choice, outcome, prev_button, next_button, label, view = controls(agent_stepper(runs))
    assert list(choice.options) == ["happy path", "stuck run"] and choice.value == "happy path"
    assert "answered after 2 API calls" in outcome.value
    next_button.click()
    assert "API call 2 of 2" in label.value
    shown = (outcome.value, label.value, view.value)
    choice.value = "stuck run"  # what a click on the other toggle does
    assert (outcome.value, label.value, view.value) != shown
    assert "stopped by the iteration limit after 4 API calls" in outcome.value
    assert "API call 1 of 4" in label.value and prev_button.disabled and not next_button.disabled
    for _ in range(3):
        next_button.click()
    assert "API call 4 of 4" in label.value and next_button.disabled
    assert "repeats an earlier call" in view.value
    choice.value = "happy path"
    assert "API call 1 of 2" in label.value


def test_buttons_move_between_calls_of_a_single_run(runs):
    widget = agent_stepper(runs["happy path"])
    outcome = widget.children[0]
    prev_button, next_button, label = widget.children[1].children
    view = widget.children[2]
    assert "answered after 2 API calls" in outcome.value
    assert "API call 1 of 2" in label.value and prev_button.disabled
    first_view = view.value
    next_button.click()
    assert "API call 2 of 2" in label.value and next_button.disabled
    assert view.value != first_view and "5:18 AM" in view.value
    prev_button.click()
    assert view.value == first_view
