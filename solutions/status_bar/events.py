"""Events from the agent's own log: the bar is built by code, not by asking a model.

The textbook's first lesson on status bars (part 12): a ~20-line regex function kept the bar at
ground-truth accuracy, while a frontier model asked to summarise the history into a bar made
enough mistakes to fall below having no bar at all. `events_from_messages` is that function for
a Chat Completions transcript: it reads the assistant's tool calls (what the agent did) and the
framework's error markers, and never the text of a tool result (what someone else said).
"""
from __future__ import annotations

import json

# The seed's two todo tools (experiment 2-8), and a tool that changes the working directory.
TODO_REWRITE, TODO_UPDATE, CHANGE_DIR = "rewrite_todo_list", "update_todo_status", "change_directory"


def _arguments(call: dict) -> dict:
    try:
        value = json.loads(call.get("function", {}).get("arguments") or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def events_from_messages(messages: list[dict], target_args: dict | None = None) -> list[dict]:
    """The events a transcript implies, in order.

    target_args maps a tool name to the argument that names its target (for per-target
    counters), e.g. {"call_merchant": "merchant"}. A tool result produces an event only when it
    is an error the framework recorded (a JSON object with an "error" key); its text is not read.
    """
    target_args = target_args or {}
    names: dict[str, str] = {}
    events: list[dict] = []
    for message in messages:
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        for call in calls or ():
            name, args = call["function"]["name"], _arguments(call)
            names[call.get("id")] = name
            target = args.get(target_args[name]) if name in target_args else None
            events.append({"type": "tool_call", "tool": name, "target": target})
            if name == TODO_REWRITE and isinstance(args.get("items"), list):
                events.append({"type": "todo_rewrite", "items": args["items"]})
            elif name == TODO_UPDATE and "id" in args:
                events.append({"type": "todo_update", "id": args["id"], "status": args.get("status")})
            elif name == CHANGE_DIR and args.get("path"):
                events.append({"type": "cwd", "path": args["path"]})
        if message.get("role") == "tool":
            error = _recorded_error(message.get("content"))
            if error:
                events.append({"type": "tool_result", "tool": names.get(message.get("tool_call_id")),
                               "error": error})
    return events


def _recorded_error(content) -> dict | None:
    """The framework's error record {"error": {...}} at the top of a result, else None."""
    try:
        data = json.loads(content) if isinstance(content, str) else None
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return {k: error[k] for k in ("error_type", "message", "arguments", "hint") if k in error}
    return None
