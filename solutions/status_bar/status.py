"""The one pure function that moves a status forward by one event, and what it is built on.

A status is a plain dict, made by `new_status` (one of lab 08's givens, `course.givens.status_bar`,
whose docstring lists its keys). Events are dicts with a "type" (see EVENT_TYPES). Counters move
only on "tool_call" events, which the framework writes from the agent's *own* call log. A
"tool_result" never touches a counter, whatever its text says: a tool result is text someone
else controls.
"""
from __future__ import annotations

import posixpath

from course.givens.status_bar import EVENT_TYPES, TODO_STATUSES, iso_time, new_status, whole_number


def _text(event: dict, field: str) -> str:
    value = event.get(field)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"a {event.get('type')!r} event needs a non-empty string {field!r}, "
                         f"got {value!r}")
    return value.strip()


def _todo_status(value) -> str:
    if value not in TODO_STATUSES:
        raise ValueError(f"todo status must be one of {', '.join(TODO_STATUSES)}, got {value!r}")
    return value


def counter_keys(tool: str, target: str | None = None) -> list[str]:
    """The counters one call moves: the tool's, and the tool-and-target's if there is a target."""
    keys = [tool]
    if target is not None and str(target).strip():
        keys.append(f"{tool}.{' '.join(str(target).split())}")
    return keys


def limit_for(status: dict, key: str) -> int | None:
    """The limit on a counter: its own, else its tool's wildcard ("tool.*") for a target key."""
    limits = status.get("limits") or {}
    if key in limits:
        return limits[key]
    tool, dot, _ = key.partition(".")
    return limits.get(f"{tool}.*") if dot else None


def _error(event: dict, status: dict) -> dict:
    return {"tool": event.get("tool"), "type": event.get("error_type") or "Error",
            "message": _text(event, "message"), "arguments": event.get("arguments"),
            "hint": event.get("hint"), "at": status.get("now")}


def update_status(status: dict, event: dict) -> dict:
    """The status after one event. Pure: `status` is not changed; a new dict is returned.

    tool_call    {"tool", "target"?}            counts the call (tool, and tool.target)
    tool_result  {"tool", "content", "error"?}  only an "error" dict moves the status (last error);
                                                the content is never read: counters stay put
    todo_rewrite {"items": [{"id", "content", "status"?}]}   replaces the list
    todo_update  {"id", "status"}               one item's status
    clock        {"now": ISO time}              the first reading also sets "started"
    error        {"tool"?, "error_type"?, "message", "arguments"?, "hint"?}
    cwd          {"path"}                       relative paths are resolved against the old cwd
    tokens       {"used", "budget"?}            tokens used so far (absolute, not an increment)
    """
    if not isinstance(event, dict) or event.get("type") not in EVENT_TYPES:
        kind = event.get("type") if isinstance(event, dict) else type(event).__name__
        raise ValueError(f"unknown event {kind!r}: expected a dict whose 'type' is one of "
                         f"{', '.join(EVENT_TYPES)}")
    kind = event["type"]
    new = dict(status)
    if kind == "tool_call":
        calls = dict(status.get("calls") or {})
        for key in counter_keys(_text(event, "tool"), event.get("target")):
            calls[key] = calls.get(key, 0) + 1
        new["calls"] = calls
    elif kind == "tool_result":
        if isinstance(event.get("error"), dict):
            new["last_error"] = _error({"tool": event.get("tool"), **event["error"]}, status)
    elif kind == "todo_rewrite":
        items = event.get("items")
        if not isinstance(items, list):
            raise ValueError("a 'todo_rewrite' event needs 'items', a list of {id, content, status}")
        todos = {}
        for item in items:
            if not isinstance(item, dict):
                raise ValueError(f"every todo must be a dict {{id, content, status}}, got {item!r}")
            todo_id = str(item.get("id", "")).strip()
            if not todo_id or todo_id in todos:
                raise ValueError(f"every todo needs a unique non-empty id, got {item.get('id')!r}")
            content = item.get("content")
            if not isinstance(content, str) or not content.strip():
                raise ValueError(f"todo {todo_id!r} needs a non-empty string 'content', got {content!r}")
            todos[todo_id] = {"content": content.strip(),
                              "status": _todo_status(item.get("status", "pending"))}
        new["todos"] = todos
    elif kind == "todo_update":
        todo_id = str(event.get("id", "")).strip()
        todos = dict(status.get("todos") or {})
        if todo_id not in todos:
            raise ValueError(f"no todo with id {todo_id!r} (known: {', '.join(todos) or 'none'})")
        todos[todo_id] = {**todos[todo_id], "status": _todo_status(event.get("status"))}
        new["todos"] = todos
    elif kind == "clock":
        now = iso_time(event.get("now"), "a clock event's 'now'")
        if status.get("now") and now < iso_time(status["now"], "now"):
            raise ValueError(f"the clock went backwards: {event['now']} is before {status['now']}")
        new["now"] = now.isoformat()
        new["started"] = status.get("started") or new["now"]
    elif kind == "error":
        new["last_error"] = _error(event, status)
    elif kind == "cwd":
        path = _text(event, "path")
        base = status.get("cwd") or "/"
        new["cwd"] = posixpath.normpath(posixpath.join(base, path))
    elif kind == "tokens":
        tokens = dict(status.get("tokens") or {"used": 0, "budget": None})
        tokens["used"] = whole_number(event.get("used"), "a tokens event's 'used'")
        if "budget" in event:
            tokens["budget"] = whole_number(event["budget"], "a tokens event's 'budget'", True)
        new["tokens"] = tokens
    return new


def replay(events, status: dict | None = None) -> dict:
    """The status after a sequence of events, from `status` (default: an empty one)."""
    status = new_status() if status is None else status
    for event in events:
        status = update_status(status, event)
    return status
