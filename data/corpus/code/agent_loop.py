import json


def run_agent(client, model, messages, tools, handlers, max_steps=20):
    for step in range(max_steps):
        reply = client.chat.completions.create(model=model, messages=messages, tools=tools)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content
        for call in message.tool_calls:
            handler = handlers[call.function.name]
            result = handler(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(result)})
    raise RuntimeError(f"no answer after {max_steps} steps")
