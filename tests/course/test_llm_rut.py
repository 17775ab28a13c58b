"""The few-shot rut (course/llm/rut.py): alike turns before the request raise the repeated tool's
score in the sampled choice of rule memory; varied turns, short runs and temperature 0 do not."""
import json

import pytest

import course.llm
from course.llm.rut import RUT_CAP, RUT_MIN, rut

TOOLS = [{"type": "function", "function": {"name": name, "description": description, "parameters": {
    "type": "object", "properties": {key: {"type": "string"}}, "required": [key]}}}
    for name, description, key in (("read_file", "Read a file of the repository", "path"),
                                   ("search_code", "Search the code base for a pattern", "query"))]
ASK = "Now search the code for commit_offset."


def history(turns: int, varied: bool = False, result_varied: bool = False, ask: str = ASK) -> list[dict]:
    messages = [{"role": "system", "content": "You are a coding agent."},
                {"role": "user", "content": "Read the runbook page by page."}]
    for n in range(1, turns + 1):
        text = ["Reading page {n}.", "Next, page {n}.", "Page {n} now."][n % 3] if varied else "Reading page {n}."
        head = ["page {n} of 12:", "p. {n}:"][n % 2] if result_varied else "page {n} of 12:"
        messages += [{"role": "assistant", "content": text.format(n=n), "tool_calls": [{
                          "id": f"c{n}", "type": "function", "function": {
                              "name": "read_file", "arguments": json.dumps({"path": "runbook.md", "page": n})}}]},
                     {"role": "tool", "tool_call_id": f"c{n}", "content": head.format(n=n) + "\nThe drain timeout is 45s."}]
    return messages + [{"role": "user", "content": ask}]


def test_a_run_of_alike_turns_is_a_rut():
    messages = history(5)
    assert rut(messages, len(messages) - 1) == ("read_file", [2, 4, 6, 8, 10])
    short = history(RUT_MIN - 1)
    assert rut(short, len(short) - 1) is None


@pytest.mark.parametrize("kind", ["text", "result"])
def test_structured_variation_breaks_the_rut(kind):
    messages = history(8, varied=kind == "text", result_varied=kind == "result")
    assert rut(messages, len(messages) - 1) is None


def test_a_turn_with_two_calls_or_a_user_message_ends_the_run():
    messages = history(6)
    messages[6]["tool_calls"].append({"id": "x", "type": "function", "function": {"name": "read_file", "arguments": "{}"}})
    messages.insert(7, {"role": "tool", "tool_call_id": "x", "content": "page 9 of 12:"})
    assert rut(messages, len(messages) - 1) == ("read_file", [9, 11, 13])
    assert rut(history(0), 1) is None


def shares(server, messages, temperature=1.0, seeds=range(30)):
    """How often the first call is search_code (the right tool), and one reply's trace."""
    client, right, reply = server.client(), 0, None
    for seed in seeds:
        reply = client.chat.completions.create(model=course.llm.MODEL_NAME, messages=messages, tools=TOOLS,
                                               temperature=temperature, seed=seed)
        calls = reply.choices[0].message.tool_calls or []
        right += bool(calls) and calls[0].function.name == "search_code"
    return right, reply


def test_a_rut_pulls_the_sampled_choice_and_variation_frees_it(server):
    fresh, _ = shares(server, history(0))
    rutted, reply = shares(server, history(RUT_CAP + 2))
    varied, _ = shares(server, history(RUT_CAP + 2, varied=True))
    assert rutted < fresh == varied
    steps = [s for s in reply.model_extra["teaching_trace"] if s["rule"] == "rut"]
    assert steps and f"+{RUT_CAP:g}" in steps[0]["why"]  # capped


def test_temperature_zero_is_unchanged_by_a_rut(server):
    right, reply = shares(server, history(10), temperature=0, seeds=range(1))
    assert right == 1 and not [s for s in reply.model_extra["teaching_trace"] if s["rule"] == "rut"]
    plain = server.client().chat.completions.create(model=course.llm.MODEL_NAME, messages=history(10), tools=TOOLS)
    assert plain.choices[0].message.tool_calls[0].function.name == "search_code"
