"""Rule `instructions` (course/llm/procedures.py), through the openai SDK: a numbered procedure
in the system prompt is followed step by step, one call per reply, skipping none, and stops
where a step says to; the same steps as an unordered list are applied only when their trigger
is named, so a prerequisite can be skipped; "NEVER use X for T; use Y instead" swaps the call."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from tests.messages import function_tool

MODEL = course.llm.MODEL_NAME


def tool(name, about, **params):
    return function_tool(name, about, {p: {"type": "string", "description": d} for p, d in params.items()})


TOOLS = [tool("verify_identity", "Verify the customer's identity from their customer id",
              customer_id="The customer's id, e.g. C-1001"),
         tool("get_booking", "Look up a booking by its booking reference", booking_id="Booking reference"),
         tool("change_flight", "Change the flight of a booking to another date",
              booking_id="Booking reference", date="The new date"),
         tool("issue_cash_refund", "Refund a booking in cash", booking_id="Booking reference"),
         tool("issue_voucher", "Refund a booking as a travel voucher", booking_id="Booking reference")]

PROCEDURE = """You are the airline's service desk.

Procedure for changing a flight:
1. Verify the customer's identity with `verify_identity`. If it fails, stop.
2. Look up the booking with `get_booking`.
3. Change the flight with `change_flight`.
4. Tell the customer the new date."""

BULLETS = """You are the airline's service desk.

Rules for changing a flight:
- Verify the customer's identity with `verify_identity`.
- Look up the booking with `get_booking`.
- Change the flight with `change_flight`."""

REQUEST = "I am customer C-1001: please change the flight of booking BK123 to Friday"


@pytest.fixture(scope="module")
def client():
    with course.llm.serve() as server:
        yield server.client()


def run(client, system, request, results=None, limit=8):
    """Drive the loop: each call answered by `results(name)` ("ok" by default). The names of
    the calls in order and the final text."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": request}]
    names = []
    for _ in range(limit):
        reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return names, message.content, reply
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            names.append(call.function.name)
            outcome = (results or {}).get(call.function.name, f"{call.function.name}: ok")
            messages.append({"role": "tool", "tool_call_id": call.id, "content": outcome})
    raise AssertionError(f"no answer after {limit} replies: {names}")


def test_a_numbered_procedure_is_followed_step_by_step_skipping_none(client):
    names, text, reply = run(client, PROCEDURE, REQUEST)
    assert names == ["verify_identity", "get_booking", "change_flight"]
    assert text.startswith("I followed the procedure.")
    rules = [step["rule"] for step in reply.model_extra["teaching_trace"]]
    assert "instructions" in rules


def test_each_reply_makes_one_step_and_key_values_in_a_step_are_its_arguments(client):
    reply = client.chat.completions.create(model=MODEL, tools=TOOLS, messages=[
        {"role": "system", "content": PROCEDURE}, {"role": "user", "content": REQUEST}])
    [call] = reply.choices[0].message.tool_calls
    assert call.function.name == "verify_identity" and "customer_id" in json.loads(call.function.arguments)
    pinned = PROCEDURE.replace("with `verify_identity`.", "with `verify_identity` customer_id=C-1001.")
    reply = client.chat.completions.create(model=MODEL, tools=TOOLS, messages=[
        {"role": "system", "content": pinned}, {"role": "user", "content": REQUEST}])
    assert json.loads(reply.choices[0].message.tool_calls[0].function.arguments) == {"customer_id": "C-1001"}


def test_the_same_steps_as_bullets_skip_the_prerequisite_the_request_does_not_name(client):
    names, _, _ = run(client, BULLETS, "Please change the flight of booking BK123 to Friday")
    assert "verify_identity" not in names and "change_flight" in names
    numbered, _, _ = run(client, PROCEDURE, "Please change the flight of booking BK123 to Friday")
    assert numbered[0] == "verify_identity", "numbered, the step is never skipped"


def test_a_bulleted_rule_applies_when_the_request_names_its_trigger(client):
    names, _, _ = run(client, BULLETS, "Verify my identity (C-1001), then change booking BK123 to Friday")
    assert names[0] == "verify_identity"


def test_a_step_that_says_stop_on_failure_ends_the_procedure(client):
    names, text, reply = run(client, PROCEDURE, REQUEST,
                             results={"verify_identity": "Error: identity could not be verified"})
    assert names == ["verify_identity"]
    assert "step 1" in text and "stop" in text
    assert any("says to stop" in step["why"] for step in reply.model_extra["teaching_trace"])


def test_a_step_that_does_not_say_stop_is_tried_again_after_a_failure(client):
    messages = [{"role": "system", "content": PROCEDURE}, {"role": "user", "content": REQUEST}]
    outcomes = {"verify_identity": ["ok"], "get_booking": ["Error: timeout", "BK123: Paris, Monday"],
                "change_flight": ["changed to Friday"]}
    names = []
    for _ in range(6):
        message = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS).choices[0].message
        if not message.tool_calls:
            break
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            names.append(call.function.name)
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": outcomes[call.function.name].pop(0)})
    assert names == ["verify_identity", "get_booking", "get_booking", "change_flight"]


def test_never_use_x_for_a_topic_swaps_the_call(client):
    system = ("You are the airline's service desk.\n"
              "NEVER use `issue_cash_refund` for refunds; use `issue_voucher` instead.")
    request = "I want a refund for booking BK123"
    plain = client.chat.completions.create(model=MODEL, tools=TOOLS, messages=[
        {"role": "user", "content": request}])
    assert plain.choices[0].message.tool_calls[0].function.name == "issue_cash_refund"
    got = client.chat.completions.create(model=MODEL, tools=TOOLS, messages=[
        {"role": "system", "content": system}, {"role": "user", "content": request}])
    [call] = got.choices[0].message.tool_calls
    assert call.function.name == "issue_voucher"
    assert json.loads(call.function.arguments) == \
        json.loads(plain.choices[0].message.tool_calls[0].function.arguments), "the same arguments"
    assert any("never to use issue_cash_refund" in step["why"] for step in got.model_extra["teaching_trace"])


def test_a_request_no_procedure_fits_is_left_to_the_other_rules(client):
    names, _, _ = run(client, PROCEDURE, "What is booking BK123?")
    assert names == ["get_booking"]


def test_the_rule_is_in_the_rule_table():
    assert ("instructions" in [name for _, name, _ in course.llm.rule_table()])


@settings(max_examples=25, deadline=None)
@given(st.permutations([t["function"]["name"] for t in TOOLS]).flatmap(
    lambda order: st.integers(2, len(order)).map(lambda n: order[:n])))
def test_any_numbered_procedure_is_followed_in_order_skipping_none(client, order):
    steps = "\n".join(f"{k}. Use `{name}` for this step." for k, name in enumerate(order, 1))
    system = f"You are the airline's service desk.\n\nProcedure for handling a booking:\n{steps}"
    names, text, _ = run(client, system, "Please handle my booking BK123", limit=len(order) + 2)
    assert names == list(order)
    assert text.startswith("I followed the procedure.")
