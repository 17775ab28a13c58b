"""A cache-friendly agent request (lab 05's third exercise): build every call so that it starts
with exactly the tokens the previous call sent, and the prompt cache can reuse them.

The textbook's rules for prompt caching, as code:

- the tool definitions are serialised stably: every JSON object's keys sorted, the tools ordered
  by name, so the same tools handed over in another order (from a dict, a plugin registry, a
  set) still give the same bytes;
- dynamic information (the current time) goes at the end, in the last user message, never in
  the system prompt, which comes right after the tools and would break the prefix there;
- the history is appended, never rewritten: it is sent exactly as given (a tool call's
  arguments string as the model wrote it), so the next request begins with this whole one.

The teaching model renders tools in the order and key order it receives them
(`course.llm.template`), so how a request is built decides what `cached_tokens` reports.
"""
from __future__ import annotations

import copy
import json
from datetime import datetime


def stable_tools(tools: list[dict]) -> list[dict]:
    """The tool definitions in one canonical form: each JSON object's keys sorted (at every
    depth; lists keep their order), the tools ordered by function name.

    Equal tools give the same `json.dumps` text whatever order they, or their keys, came in.
    """
    canonical = [json.loads(json.dumps(tool, sort_keys=True, ensure_ascii=False))
                 for tool in tools]
    # Ties (two tools with one name) are broken by the whole text, so the order is still total.
    return sorted(canonical, key=lambda tool: (_tool_name(tool),
                                               json.dumps(tool, ensure_ascii=False)))


def _tool_name(tool: dict) -> str:
    function = tool.get("function")
    name = function.get("name") if isinstance(function, dict) else tool.get("name")
    return name if isinstance(name, str) else ""


def _time_text(now) -> str:
    if isinstance(now, datetime):
        return now.isoformat(sep=" ", timespec="seconds")
    return str(now)


def cache_friendly_request(system, tools, history, now, user_message):
    """(messages, tools) for one call of an agent, built so the prompt cache can reuse the
    previous call.

    `system` is the fixed system prompt; `tools` the tool definitions, in any order; `history`
    the conversation so far without the system message; `now` the current time (a datetime);
    `user_message` the new turn. The messages are the system prompt exactly as given, then the
    history exactly as given (copied, never edited), then one user message that carries the
    time and the new turn. The tools come back in `stable_tools` form. Nothing given is changed.
    """
    if not isinstance(system, str):
        raise TypeError(f"system must be the system prompt as a string, "
                        f"not {type(system).__name__}")
    messages = [{"role": "system", "content": system}]
    messages += copy.deepcopy(list(history))
    messages.append({"role": "user",
                     "content": f"Current time: {_time_text(now)}\n\n{user_message}"})
    return messages, stable_tools(tools)
