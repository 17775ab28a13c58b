"""The raw stream, assembled: `parse_stream` (the deltas of a streamed chat completion back into
the message the same request gets unstreamed) and `first_ready_call` (the first tool call that
may start while the reply is still streaming)."""
from __future__ import annotations

import json

from course.givens.reasoning_stream import SCHEMA_TYPES, schemas


def parse_stream(chunks) -> dict:
    """The assistant message a stream of `chat.completion.chunk` dicts adds up to:
    {"role": "assistant", "content", "reasoning_content", "tool_calls"}, each None when nothing of
    it arrived. Text and reasoning are the deltas' pieces joined; tool calls are merged by their
    `index` (id, type and name from the delta that has them, arguments and name pieces joined in
    order), in index order, whatever the interleaving. Chunks without choices (the usage chunk) and
    deltas of null fields add nothing. Works on a prefix of a stream too (the reply so far)."""
    text, reasoning, calls = [], [], {}
    for chunk in chunks:
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            if delta.get("content") is not None:
                text.append(delta["content"])
            if delta.get("reasoning_content") is not None:
                reasoning.append(delta["reasoning_content"])
            for piece in delta.get("tool_calls") or ():
                call = calls.setdefault(piece["index"], {"id": None, "type": "function",
                                                         "function": {"name": "", "arguments": ""}})
                if piece.get("id"):
                    call["id"] = piece["id"]
                if piece.get("type"):
                    call["type"] = piece["type"]
                fn = piece.get("function") or {}
                call["function"]["name"] += fn.get("name") or ""
                call["function"]["arguments"] += fn.get("arguments") or ""
    return {"role": "assistant", "content": "".join(text) or None,
            "reasoning_content": "".join(reasoning) or None,
            "tool_calls": [calls[i] for i in sorted(calls)] or None}


def argument_problems(schema: dict, arguments) -> list[str]:
    """What is wrong with `arguments` against a tool's parameters schema (a JSON Schema object
    with `properties`, `required`, `additionalProperties`, per property `type` and `enum`)."""
    if not isinstance(arguments, dict):
        return [f"arguments must be a JSON object, got {type(arguments).__name__}"]
    properties = schema.get("properties") or {}
    found = [f"missing required argument {name!r}" for name in schema.get("required") or ()
             if name not in arguments]
    for name, value in arguments.items():
        spec = properties.get(name)
        if spec is None:
            if schema.get("additionalProperties") is False:
                found.append(f"unknown argument {name!r}")
            continue
        kinds = spec.get("type")
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or ())
        allowed = tuple(t for kind in kinds for t in SCHEMA_TYPES.get(kind, ()))
        if kinds and (not isinstance(value, allowed)
                      or (isinstance(value, bool) and "boolean" not in kinds)):
            found.append(f"argument {name!r} must be {'/'.join(kinds)}, got {value!r}")
        elif "enum" in spec and value not in spec["enum"]:
            found.append(f"argument {name!r} must be one of {spec['enum']}, got {value!r}")
    return found


def first_ready_call(partial: dict, tools=None, started=()) -> dict | None:
    """The first tool call of the reply so far (`partial`, as parse_stream gives it) that may
    start now: not already started (its id in `started`), a known tool's name, arguments that are
    a whole JSON object (so no later delta can add to them) and valid against the tool's schema.
    Calls are looked at in index order; an incomplete or invalid call is skipped (it starts once
    complete, or is reported after the stream). None when no call is ready."""
    known = schemas(tools)
    for call in partial.get("tool_calls") or ():
        fn = call.get("function") or {}
        if not call.get("id") or call["id"] in started or fn.get("name") not in known:
            continue
        text = (fn.get("arguments") or "").strip()
        if not text.endswith("}"):
            continue
        try:
            arguments = json.loads(text)
        except ValueError:
            continue
        if not argument_problems(known[fn["name"]], arguments):
            return call
    return None
