"""Events from the agent's own log: the bar is built by code, not by asking a model.

The textbook's first lesson on status bars (part 12): a ~20-line regex function kept the bar at
ground-truth accuracy, while a frontier model asked to summarise the history into a bar made
enough mistakes to fall below having no bar at all. `events_from_messages` is that function for
a Chat Completions transcript: it reads the assistant's tool calls (what the agent did) and the
framework's error markers, and never the text of a tool result (what someone else said).
"""
from __future__ import annotations

import json

from course.givens.status_bar import TODO_STATUSES, new_status
from solutions.status_bar.status import update_status

# The seed's two todo tools (experiment 2-8), and a tool that changes the working directory.
TODO_REWRITE, TODO_UPDATE, CHANGE_DIR = "rewrite_todo_list", "update_todo_status", "change_directory"
SKIPPED = "MalformedToolCall"  # the error_type of the event that reports a call not counted


def _arguments(function: dict) -> dict:
    """The call's arguments as a dict; {} when they are not a JSON object (models emit such
    arguments: the call still happened and still counts, only without a target)."""
    raw = function.get("arguments")
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _skipped(where: str, why: str) -> dict:
    return {"type": "error", "tool": None, "error_type": SKIPPED,
            "message": f"{where} {why}: it was not counted"}


def _refusal(event: dict) -> str | None:
    """Why update_status would refuse this todo event, or None (its checks, not a copy)."""
    if event["type"] == "todo_update":
        ok = event["status"] in TODO_STATUSES
        return None if ok else f"its status must be one of {', '.join(TODO_STATUSES)}, got {event['status']!r}"
    try:
        update_status(new_status(), event)
    except ValueError as exc:
        return str(exc)
    return None


def _call_events(call, where: str, target_args: dict) -> tuple[str | None, list[dict]]:
    """(the call's tool name or None, its events) for one entry of an assistant's tool_calls."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict):
        return None, [_skipped(where, "is not a function call (it has no 'function' object)")]
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        return None, [_skipped(where, f"names no tool (its function name is {name!r})")]
    args = _arguments(function)
    key = target_args.get(name)
    target = args.get(key) if isinstance(key, str) else None
    if target is not None and not isinstance(target, (str, int, float)):
        target = None  # a list or an object names no one target
    events = [{"type": "tool_call", "tool": name, "target": None if target is None else str(target)}]
    todo = None
    if name == TODO_REWRITE and "items" in args:
        todo = {"type": "todo_rewrite", "items": args["items"]}
    elif name == TODO_UPDATE and "id" in args:
        todo = {"type": "todo_update", "id": str(args["id"]), "status": args.get("status")}
    elif name == CHANGE_DIR and isinstance(args.get("path"), str) and args["path"].strip():
        events.append({"type": "cwd", "path": args["path"]})
    why = _refusal(todo) if todo else None
    if why:
        events.append({"type": "error", "tool": name, "error_type": SKIPPED,
                       "message": f"{where} was counted, but its todo change was not applied: {why}"})
    elif todo:
        events.append(todo)
    return name, events


def events_from_messages(messages: list[dict], target_args: dict | None = None) -> list[dict]:
    """The events a transcript implies, in order.

    target_args maps a tool name to the argument that names its target (for per-target
    counters), e.g. {"call_merchant": "merchant"}. A tool result produces an event only when it
    is an error the framework recorded (a JSON object with an "error" key); its text is not read.

    Malformed input never raises, except `messages` that is not a list (a ValueError that says
    so). A call whose arguments are not a JSON object still counts, without a target. A call
    that names no tool (no `function` object, a name that is not a non-empty string), or
    `tool_calls` that is not a list, is skipped: nothing is counted that cannot be named, and the
    skip becomes an "error" event (error_type "MalformedToolCall", a sentence saying where and
    why), so the bar shows it instead of hiding it; so does a todo call whose arguments
    update_status would refuse (the call counts, the list does not change). Messages that are
    not dicts are ignored.
    """
    if not isinstance(messages, list):
        raise ValueError(f"messages must be a list of message dicts, not {type(messages).__name__}")
    target_args = target_args if isinstance(target_args, dict) else {}
    names: dict[str, str] = {}
    events: list[dict] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if calls is not None and not isinstance(calls, list):
            events.append(_skipped(f"messages[{i}].tool_calls", "is not a list of calls"))
            calls = None
        for j, call in enumerate(calls or ()):
            name, found = _call_events(call, f"messages[{i}].tool_calls[{j}]", target_args)
            events.extend(found)
            call_id = call.get("id") if isinstance(call, dict) else None
            if name and isinstance(call_id, str):
                names[call_id] = name
        if message.get("role") == "tool":
            error = _recorded_error(message.get("content"))
            call_id = message.get("tool_call_id")
            if error:
                events.append({"type": "tool_result", "error": error,
                               "tool": names.get(call_id) if isinstance(call_id, str) else None})
    return events


def _recorded_error(content) -> dict | None:
    """The framework's error record {"error": {...}} at the top of a result, else None."""
    try:
        data = json.loads(content) if isinstance(content, str) else None
    except (ValueError, RecursionError):
        return None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"].strip():
        return {k: error[k] for k in ("error_type", "message", "arguments", "hint") if k in error}
    return None
