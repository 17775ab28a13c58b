"""Chat Completions messages for tests: a user message, a tool call, an assistant message making
calls, a tool result. One set, imported by every test module that builds transcripts by hand
(hypothesis strategies for message lists are in tests/solutions/message_shapes.py).

Keys come in the order the API documents them, so a test that serialises a message (token
counts, cache prefixes) sees the same bytes whichever helper built it.
"""
from __future__ import annotations

import json


def user(text) -> dict:
    return {"role": "user", "content": text}


def tool_call(call_id, name: str = "f", arguments: str | dict = "{}") -> dict:
    """One entry of an assistant's tool_calls; `arguments` a JSON string, or a dict to encode."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def calling(*calls: dict, content=None) -> dict:
    """An assistant message making `calls` (tool_call dicts), with `content` beside them."""
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def tool_result(call_id, content="ok") -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def function_tool(name: str, description: str, properties: dict[str, dict]) -> dict:
    """A tool definition whose parameters are `properties` ({name: JSON schema}), all required."""
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": list(properties)}}}
