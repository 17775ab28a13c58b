"""How notes meet the rest of the course: as GSSC packets (Chapter 03) and as a tool call.

Both work on any object with NoteTool's methods (they never touch files themselves).
"""
from __future__ import annotations

import sqlite3
from typing import Any, Callable, Iterable, Mapping

from solutions.gssc import Packet
from course.givens.notes import NOTE_TYPES, Note, NoteError
from solutions.notes.format import id_number

ACTIONS = ("create", "read", "update", "search", "list", "summary", "delete")

# How notes enter a GSSC context: which section, and how much more they are worth.
NOTE_SECTION = {
    "task_state": "State", "blocker": "State", "action": "State",
    "conclusion": "Evidence", "reference": "Evidence", "general": "Context",
}
NOTE_PRIORITY = {"blocker": 1.5}  # an open problem must not be crowded out; others 1.0


def note_to_packet(note: Note) -> Packet:
    """A note as a GSSC packet: state-like notes go to [State], findings to [Evidence],
    general notes to [Context]; blockers carry a higher priority."""
    head = f"{note.title} [{note.type} {note.id}]"
    body = note.content.strip()
    return Packet(
        content=f"{head}\n{body}" if body else head,
        source="notes",
        timestamp=note.updated_at,
        section=NOTE_SECTION[note.type],
        priority=NOTE_PRIORITY.get(note.type, 1.0),
        metadata={"note_id": note.id, "note_type": note.type, "tags": list(note.tags)},
    )


def notes_to_packets(notes: Iterable[Note]) -> list[Packet]:
    return [note_to_packet(n) for n in notes]


def notes_source(tool, limit: int = 8) -> Callable[[str], list[Packet]]:
    """A GSSC source over a NoteTool: for a task, the notes that match it plus every open
    blocker, in id order."""
    def notes_for(task: str) -> list[Packet]:
        found = {n.id: n for n in tool.search(task, limit=limit)}
        for blocker in tool.list(type="blocker"):
            found.setdefault(blocker.id, blocker)
        return notes_to_packets(found[i] for i in sorted(found, key=id_number))
    return notes_for


def as_json(note: Note, with_content: bool = True) -> dict:
    data = note.front_matter()
    if with_content:
        data["content"] = note.content
    return data


_ALLOWED = {
    "create": {"title", "content", "type", "tags"},
    "read": {"note_id"}, "delete": {"note_id"},
    "update": {"note_id", "title", "content", "type", "tags"},
    "search": {"query", "limit", "type", "tags"},
    "list": {"type", "tags", "limit"}, "summary": set(),
}


def run_action(tool, arguments: Mapping[str, Any]) -> dict:
    """Tool-call entry point: {"action": ..., ...} in, a JSON-ready dict out.
    Bad input never raises; it comes back as {"ok": False, "error": "..."}."""
    if not isinstance(arguments, Mapping):
        return {"ok": False, "error": f"arguments must be a JSON object, not {type(arguments).__name__}"}
    try:
        return {"ok": True, **_dispatch(tool, dict(arguments))}
    except (NoteError, TypeError, ValueError) as exc:
        return {"ok": False, "error": str(exc)}
    except (OSError, sqlite3.Error) as exc:  # the disk, not the call: still an answer, not a crash
        return {"ok": False, "error": f"the notes folder could not be used: {exc}"}


def _dispatch(tool, args: dict) -> dict:
    action = args.pop("action", None)
    if action not in ACTIONS:
        raise NoteError(f"action must be one of {', '.join(ACTIONS)}; got {action!r}")
    unknown = sorted(set(args) - _ALLOWED[action])
    if unknown:
        raise NoteError(f"{action} does not take {', '.join(unknown)}")
    if action == "summary":
        return {"summary": tool.summary()}
    if action in ("search", "list"):
        notes = getattr(tool, action)(**args)
        return {"notes": [as_json(n, with_content=action == "search") for n in notes]}
    if action == "create":
        return {"note": as_json(tool.create(**args))}
    note_id = args.pop("note_id", None)
    return {"note": as_json(getattr(tool, action)(note_id, **args))}


TOOL_SPEC = {
    "type": "function",
    "function": {
        "name": "notes",
        "description": "Durable structured notes kept outside the conversation: record task "
                       "state, conclusions, blockers and next actions; search them later.",
        "parameters": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": list(ACTIONS)},
                "note_id": {"type": "string", "description": "e.g. note-0003 (read/update/delete)"},
                "title": {"type": "string"},
                "content": {"type": "string", "description": "Markdown body"},
                "type": {"type": "string", "enum": list(NOTE_TYPES)},
                "tags": {"type": "array", "items": {"type": "string"}},
                "query": {"type": "string", "description": "search words, Chinese or English"},
                "limit": {"type": "integer", "minimum": 0},
            },
            "required": ["action"],
        },
    },
}
