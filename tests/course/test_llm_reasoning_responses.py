"""Reasoning models on the Responses API (course/llm/responses.py): a `reasoning` item first,
`output_tokens_details.reasoning_tokens`, and reasoning items sent back following the model's
history policy, through the real openai SDK."""
import openai
import pytest

import course.llm
from course.llm import template
from course.llm.models import REASONER
from course.llm.reasoning import POLICIES

TOOLS = [{"type": "function", "name": "read_file", "description": "Read a file in the workspace",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                         "required": ["path"]}}]
ASK = "Read the file src/a.py"


@pytest.fixture()
def client():
    with course.llm.serve() as server:
        yield server.client()


def output_back(response):
    """The response's output items as a client sends them back."""
    return [item.model_dump(exclude_none=True) for item in response.output]


def result_of(response, text="print(1)"):
    call = next(item for item in response.output if item.type == "function_call")
    return {"type": "function_call_output", "call_id": call.call_id, "output": text}


@pytest.mark.parametrize("policy", POLICIES)
def test_the_output_starts_with_the_reasoning_item_the_chat_reply_has(client, policy):
    model = REASONER[policy]
    response = client.responses.create(model=model, input=ASK, tools=TOOLS)
    chat = client.chat.completions.create(model=model, messages=[{"role": "user", "content": ASK}],
                                          tools=[{"type": "function", "function": {
                                              k: v for k, v in TOOLS[0].items() if k != "type"}}])
    reasoning = response.output[0]
    assert [item.type for item in response.output] == ["reasoning", "function_call"]
    assert [part.type for part in reasoning.summary] == ["summary_text"]
    assert reasoning.summary[0].text == chat.choices[0].message.reasoning_content
    assert reasoning.encrypted_content.startswith("tmc1.")
    assert response.usage.output_tokens_details.reasoning_tokens == \
        chat.usage.completion_tokens_details.reasoning_tokens > 0
    assert response.usage.output_tokens == chat.usage.completion_tokens


def test_a_plain_model_has_no_reasoning_item(client):
    response = client.responses.create(model=course.llm.MODEL_NAME, input=ASK, tools=TOOLS)
    assert [item.type for item in response.output] == ["function_call"]
    assert response.usage.output_tokens_details.reasoning_tokens == 0


@pytest.mark.parametrize("policy", POLICIES)
def test_chained_sent_whole_and_counted_bill_the_same(client, policy):
    """previous_response_id, the items sent back whole (store=false) and input_tokens.count agree,
    and the prompt renders the reasoning item as the policy says."""
    model = REASONER[policy]
    first = client.responses.create(model=model, input=ASK, tools=TOOLS)
    chained = client.responses.create(model=model, previous_response_id=first.id,
                                      input=[result_of(first)], tools=TOOLS)
    items = [{"role": "user", "content": ASK}] + output_back(first) + [result_of(first)]
    whole = client.responses.create(model=model, input=items, tools=TOOLS, store=False)
    counted = client.responses.input_tokens.count(model=model, input=items, tools=TOOLS)
    assert chained.usage.input_tokens == whole.usage.input_tokens == counted.input_tokens
    thought = first.output[0].summary[0].text
    call = first.output[1]
    messages = [{"role": "user", "content": ASK},
                {"role": "assistant", "content": None, "reasoning_content": thought, "tool_calls": [
                    {"id": call.call_id, "type": "function",
                     "function": {"name": call.name, "arguments": call.arguments}}]},
                {"role": "tool", "tool_call_id": call.call_id, "content": "print(1)"}]
    tools = [{"type": "function", "function": {k: v for k, v in TOOLS[0].items() if k != "type"}}]
    assert counted.input_tokens == len(template.prompt_token_ids(messages, tools, reasoning=policy))
    plain = len(template.prompt_token_ids(messages, tools))
    assert (counted.input_tokens == plain) == (policy == "strip")  # strip: the thought is left out


def test_pass_back_refuses_calls_sent_back_without_their_reasoning(client):
    model = REASONER["pass_back"]
    first = client.responses.create(model=model, input=ASK, tools=TOOLS)
    items = [{"role": "user", "content": ASK}] + [i for i in output_back(first)
                                                  if i["type"] != "reasoning"] + [result_of(first)]
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=model, input=items, tools=TOOLS)
    assert caught.value.body["param"] == "input" and caught.value.body["code"] == "missing_reasoning"
    # the other policies take the same items
    for policy in ("strip", "since_last_user"):
        client.responses.create(model=REASONER[policy], input=items, tools=TOOLS)


def test_a_reasoning_item_is_read_from_its_summary_or_its_sealed_text(client):
    model = REASONER["pass_back"]
    first = client.responses.create(model=model, input=ASK, tools=TOOLS)
    back = output_back(first)
    summary_only = [dict(back[0], encrypted_content=None)] + back[1:]
    sealed_only = [dict(back[0], summary=[])] + back[1:]
    counts = {client.responses.input_tokens.count(
        model=model, input=[{"role": "user", "content": ASK}] + items + [result_of(first)],
        tools=TOOLS).input_tokens for items in (back, summary_only, sealed_only)}
    assert len(counts) == 1
    tampered = [dict(back[0], encrypted_content=back[0]["encrypted_content"][:-4] + "AAAA")] + back[1:]
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=model, input=[{"role": "user", "content": ASK}] + tampered
                                + [result_of(first)], tools=TOOLS)
    assert caught.value.body["param"] == "input[1].encrypted_content"
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=model, input=[{"role": "user", "content": ASK},
                                                    dict(back[0], encrypted_content=None, summary=7)])
    assert caught.value.body["param"] == "input[1].summary"
