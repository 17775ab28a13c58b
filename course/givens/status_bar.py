"""Chapter 08's givens: what lab 08 hands the student and the answers build on, no answer among
them (lab 08 asks for `update_status`, `render_status`, `place_status` and `status_accuracy`).

    TODO_STATUSES, EVENT_TYPES   a todo's statuses and the event types a status moves on
    new_status                   an empty status: the dict every event is applied to
    OPEN, CLOSE, parse_status    the `<agent_status>` block's tags, and its {key: value} fields
    StatusMessage                the mark of a bar the framework placed (a dict subclass)

A status is a plain dict (JSON-friendly, so a test or a lab can build one by hand):

    calls       {counter key: n}   "call_merchant" counts every call of the tool,
                                   "call_merchant.Xfinity" the calls with that target
    limits      {counter key: n}   a key, or "tool.*" for every target of the tool
    todos       {id: {"content": str, "status": one of TODO_STATUSES}}
    started     ISO time of the first clock reading, or None
    now         ISO time of the latest clock reading, or None
    tokens      {"used": int, "budget": int or None}
    last_error  None, or {"tool", "type", "message", "arguments", "hint", "at"}
    cwd         the working directory, or None

`StatusMessage` is here, not with `place_status`, because its type is the mark and must be the
same class on both sides of a graded lab's wire (`course.labs.wire` rebuilds a dict subclass of
the course's own modules with its class; a student's own class would arrive as a plain dict).
The answers (`solutions.status_bar`) re-export everything here.
"""
from __future__ import annotations

from datetime import datetime

TODO_STATUSES = ("pending", "in_progress", "done", "cancelled")
EVENT_TYPES = ("tool_call", "tool_result", "todo_rewrite", "todo_update", "clock", "error",
               "cwd", "tokens")

OPEN, CLOSE = "<agent_status>", "</agent_status>"


def iso_time(value, what: str) -> datetime:
    """`value` as a datetime, or a ValueError that names `what` and shows the expected form."""
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"{what} must be an ISO time such as 2025-09-14T10:30:45, "
                         f"got {value!r}") from None


def whole_number(value, what: str, optional: bool = False):
    """`value` if it is a whole number >= 0 (or None, when `optional`), else a ValueError."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a whole number >= 0, got {value!r}")
    return value


def new_status(limits: dict | None = None, cwd: str | None = None, budget: int | None = None,
               started: str | None = None) -> dict:
    """An empty status: no calls, no todos, no error."""
    for key, value in (limits or {}).items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"limit for {key!r} must be a whole number of calls >= 0, got {value!r}")
    if started is not None:
        iso_time(started, "started")
    return {"calls": {}, "limits": dict(limits or {}), "todos": {}, "started": started,
            "now": started, "tokens": {"used": 0, "budget": whole_number(budget, "budget", True)},
            "last_error": None, "cwd": cwd}


def parse_status(block: str) -> dict[str, str]:
    """The {key: value} fields of an `<agent_status>` block (the inverse of `render_status`)."""
    text = block.strip()
    if not (text.startswith(OPEN) and text.endswith(CLOSE)):
        raise ValueError(f"not an agent status block: it must start with {OPEN} and end with {CLOSE}")
    fields = {}
    for line in text[len(OPEN):-len(CLOSE)].strip().splitlines():
        key, sep, value = line.partition(": ")
        if not sep:
            raise ValueError(f"not a 'key: value' line in the status block: {line!r}")
        fields[key.strip()] = value.strip()
    return fields


class StatusMessage(dict):
    """A status bar this framework placed: {"role": "user", "content": block} on the wire; its
    type is the mark, and `block` remembers the text it was placed with."""

    def __init__(self, block: str):
        super().__init__(role="user", content=block)
        self.block = block
