"""Chapter 14's memory folder: chapter 06's NoteTool behind the shape of Anthropic's memory tool
(`memory_20250818`: the model sends commands on paths under /memories, the client executes
them), and saving before clearing.

    tool = MemoryTool(folder, clock)
    tool.run({"command": "create", "path": "/memories/decision.md", "file_text": "..."})
    tool.run({"command": "view", "path": "/memories"})

Commands: view (the folder or one file), create, str_replace, delete. A path is either
"/memories" or "/memories/note-NNNN.md", the id checked by chapter 06's check_note_id, so no path
(../, another folder, a symlink's name) can reach a file outside the notes folder; `create`
takes any file name, uses its stem as the title and answers with the note's real path. Errors
come back as text for the model, never as exceptions: the client executes, the model reads.
"""
from __future__ import annotations

import re

from solutions.notes import InvalidNoteId, NoteError, NoteTool, check_note_id
from solutions.provider_context import PLACEHOLDER

ROOT = "/memories"
_FILE = re.compile(r"/memories/([^/]+)\.md")


def note_id_of(path) -> str:
    """The note id a memory path names; InvalidNoteId for any other path."""
    match = _FILE.fullmatch(path) if isinstance(path, str) else None
    if match is None:
        raise InvalidNoteId(f"{path!r} is not a memory file: expected {ROOT}/note-NNNN.md")
    return check_note_id(match.group(1))


class MemoryTool:
    def __init__(self, folder, clock=None):
        self.notes = NoteTool(folder, clock=clock)

    def run(self, command: dict) -> str:
        try:
            return self._run(command)
        except (NoteError, KeyError, TypeError, ValueError) as error:
            return f"Error: {error}"

    def _run(self, command: dict) -> str:
        kind, path = command["command"], command.get("path")
        if kind == "view" and path == ROOT:
            notes = self.notes.list()
            return "\n".join([f"{ROOT}/ ({len(notes)} files)"] +
                             [f"{ROOT}/{n.id}.md  {n.title}" for n in notes])
        if kind == "create":
            name = path[len(ROOT) + 1:] if isinstance(path, str) and path.startswith(ROOT + "/") else ""
            if not name.endswith(".md") or "/" in name or ".." in name or len(name) < 4:
                return f"Error: create needs a path {ROOT}/<name>.md, got {path!r}"
            note = self.notes.create(name[:-3], str(command.get("file_text", "")), type="reference")
            return f"created {ROOT}/{note.id}.md"
        note_id = note_id_of(path)
        if kind == "view":
            return self.notes.read(note_id).content
        if kind == "str_replace":
            text = self.notes.read(note_id).content
            old = str(command["old_str"])
            if text.count(old) != 1:
                return f"Error: old_str must occur exactly once in {path}, found {text.count(old)} times"
            self.notes.update(note_id, content=text.replace(old, str(command["new_str"])))
            return f"edited {path}"
        if kind == "delete":
            self.notes.delete(note_id)
            return f"deleted {path}"
        return f"Error: unknown command {kind!r} (view, create, str_replace, delete)"

    def everything(self) -> str:
        """Every memory file's title and text (what the model could read back by viewing them)."""
        return "\n".join(f"{n.title}\n{n.content}" for n in self.notes.list())


def save_before_clearing(before: list[dict], after: list[dict], tool: MemoryTool) -> list[str]:
    """For every tool result the edit (before -> after) cleared, a memory file with its text,
    named after the call; returns the paths. Call it before sending the edited request."""
    calls = {c["id"]: c["function"] for m in before for c in m.get("tool_calls") or ()}
    saved = []
    for old, new in zip(before, after):
        if old.get("role") == "tool" and new.get("content") == PLACEHOLDER and old.get("content") != PLACEHOLDER:
            fn = calls.get(old["tool_call_id"], {"name": "tool", "arguments": "{}"})
            text = f"{fn['name']} {fn['arguments']}\n{old['content']}"
            saved.append(tool.run({"command": "create", "path": f"{ROOT}/{fn['name']}-{old['tool_call_id']}.md",
                                   "file_text": text}).split(" ", 1)[1])
    return saved


def editing_with_memory(run, tool: MemoryTool, trigger: int, keep: int) -> tuple[list[dict], int]:
    """Chapter 11's run under context editing (the client-side clear_tool_uses), each result saved
    to memory before the request that clears it; (the final context, files saved)."""
    from solutions.provider_context import clear_tool_uses

    history, previous, saved = run.head(), None, 0
    for step in run.steps:
        history = history + step["messages"]
        context = clear_tool_uses(history, trigger, keep, tools=run.tools)["messages"]
        if previous is not None:  # what this request clears that the previous one still showed
            shown = previous + history[len(previous):]
            saved += len(save_before_clearing(shown, context, tool))
        else:
            saved += len(save_before_clearing(history, context, tool))
        previous = context
    return context, saved
