"""Server state on the Responses API (Chapter 14): a conversation chained with
`previous_response_id`, the server holding the turns, the client sending only what is new."""
from __future__ import annotations

import json

from course.givens.provider_context import INSTRUCTIONS, TOOLS, execute_tool
from course.usage import read_usage, total


def _as_input(item) -> dict:
    """An output item of a response as an input item of the next request."""
    if item.type == "function_call":
        return {"type": "function_call", "call_id": item.call_id, "name": item.name,
                "arguments": item.arguments}
    if item.type == "message":
        text = "".join(part.text for part in item.content if getattr(part, "text", None) is not None)
        return {"role": "assistant", "content": text}
    return item.model_dump(exclude_none=True, warnings=False)


def chain_turns(client, turns, tools=None, execute=None, model=None, instructions=INSTRUCTIONS,
                store=True, max_calls=5):
    """Send each user turn with `previous_response_id` set to the last response (the first turn
    has none); answer the model's function calls with `function_call_output` items (results from
    `execute(name, arguments_dict)`, chained too) until it replies with text or `max_calls`
    requests were sent for the turn. `instructions` go with every request (the server does not
    carry them over). With `store=False` the server keeps nothing, so the client carries the
    conversation itself: every request sends all the items so far (and no previous_response_id).
    Returns one dict per turn: input, text, response_id (the turn's last response), requests,
    input_tokens, cached_tokens, output_tokens (summed over its requests; None when the provider
    did not report a figure, never a silent 0)."""
    import course.llm

    tools = TOOLS if tools is None else tools
    execute = execute_tool if execute is None else execute
    model = model or course.llm.MODEL_NAME
    previous, carried, out = None, [], []
    for turn in turns:
        record = {"input": turn, "text": None, "response_id": None, "requests": 0}
        usages = []
        pending = [{"role": "user", "content": turn}]
        while pending and record["requests"] < max_calls:
            if store:
                response = client.responses.create(model=model, input=pending, tools=tools,
                                                   instructions=instructions, store=True,
                                                   previous_response_id=previous)
            else:
                carried += pending
                response = client.responses.create(model=model, input=carried, tools=tools,
                                                   instructions=instructions, store=False)
                carried += [_as_input(item) for item in response.output]
            record["requests"] += 1
            usages.append(read_usage(response.usage))
            previous = record["response_id"] = response.id
            calls = [item for item in response.output if item.type == "function_call"]
            pending = []
            for call in calls:
                try:
                    arguments = json.loads(call.arguments or "{}")
                    result = execute(call.name, arguments if isinstance(arguments, dict) else {})
                except Exception as error:  # the model is told, the loop goes on
                    result = json.dumps({"error": f"{type(error).__name__}: {error}"})
                pending.append({"type": "function_call_output", "call_id": call.call_id,
                                "output": result if isinstance(result, str) else json.dumps(result)})
            if not calls:
                record["text"] = response.output_text
        record["input_tokens"] = total(u.prompt for u in usages)
        record["cached_tokens"] = total(u.cached for u in usages)
        record["output_tokens"] = total(u.completion for u in usages)
        out.append(record)
    return out
