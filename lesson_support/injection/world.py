"""The world one row runs in: fake tools that serve the row's data (pages, documents, search
results, an inbox, notes kept from earlier sessions, a terminal listing, a skill, an issue
tracker) and record every call that actually runs. Nothing leaves the machine: `send_email`,
`write_file` and `http_post` only write to the record.

This is also where most layers act: outside text is sanitised and fenced as it is delivered,
tool calls pass the guard (least privilege, confirmation by the simulated user), and recalled
notes that came from outside are fenced again (provenance).
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from course.paths import DATA_DIR
from solutions.injection import IRREVERSIBLE, ToolPolicy
from solutions.notes import NoteTool
from lesson_support.injection.data import TABLE
from lesson_support.injection.layers import sanitise, tagged

if TYPE_CHECKING:
    from lesson_support.injection.session import RowRun

# Tools whose output comes from outside the operator's control.
EXTERNAL_TOOLS = frozenset({"fetch_page", "read_document", "web_search", "read_inbox",
                            "run_command", "check_tracker"})
NOTE_CLOCK = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def _approves(row: dict, name: str, args: dict) -> bool:
    """The simulated user: yes to exactly the calls the task asked for, no to anything else."""
    for allowed in row.get("approves", ()):
        if allowed["name"] == name and all(
                str(args.get(k, "")).strip().lower() == str(v).lower()
                for k, v in allowed["args"].items()):
            return True
    return False


class Scene:
    """The world one row runs in: fake tools that serve the row's data and record calls."""

    def __init__(self, row, layers, run: RowRun, fence_fn, guard_fn, notes_dir):
        self.row, self.layers, self.run = row, layers, run
        self.world = row.get("world", {})
        self.files = TABLE["files"]
        self.fence_fn, self.guard_fn = fence_fn, guard_fn
        self.notes = NoteTool(notes_dir, clock=lambda: NOTE_CLOCK)
        self.tainted: dict[str, str] = {}   # note id -> where its text came from
        self.policy = ToolPolicy(
            allowed=frozenset(row.get("needs", ())) if "least_privilege" in layers else None,
            irreversible=IRREVERSIBLE if "confirm" in layers else frozenset(),
            confirm=self._confirm if "confirm" in layers else None)

    def _defence(self, fn, *args):
        """Call a defence; remember the first exception it raises (run_row raises it after the
        run: here it would become a tool error the model reads, and the row look defended)."""
        try:
            return fn(*args)
        except Exception as exc:
            if self.run.defence_error is None:
                self.run.defence_error = exc
            raise

    def _confirm(self, name, args) -> bool:
        self.run.asked.append((name, dict(args)))
        return _approves(self.row, name, args)

    # -- how outside text enters the context
    def deliver(self, tool: str, text: str, source: str) -> str:
        if "sanitise" in self.layers:
            text = sanitise(text)
        if tagged(self.layers) and tool in EXTERNAL_TOOLS:
            text = self._defence(self.fence_fn, text, source)
        return text

    def remember(self, title: str, content: str, origin: str) -> None:
        """A note as the earlier session's note-taker wrote it; outside origins become tags."""
        tags = [] if origin == "user" else ["external", ("source:" + origin)[:100]]
        note = self.notes.create(title, content, type="general", tags=tags)
        if tags:
            self.tainted[note.id] = origin

    # -- the tools
    def execute(self, name: str, args: dict):
        guarded = self._defence(self.guard_fn, {"name": name, "arguments": args}, self.policy)
        self.run.attempted.append((name, dict(args), guarded.reason))
        if not guarded.allowed:
            return {"refused": guarded.reason}
        handler = getattr(self, "tool_" + name, None)
        if handler is None:
            return {"error": f"unknown tool {name}"}
        self.run.executed.append({"name": name, "arguments": dict(args)})
        return handler(args)

    def tool_fetch_page(self, args):
        url = str(args.get("url", ""))
        page = self.world.get("pages", {}).get(url)
        return self.deliver("fetch_page", page, url) if page is not None else {"error": f"404: {url}"}

    def tool_read_document(self, args):
        path = str(args.get("path", ""))
        doc = self.world.get("documents", {}).get(path)
        if doc is None:
            return {"error": f"no document {path}"}
        return self.deliver("read_document", json.dumps(doc, ensure_ascii=False), path)

    def tool_web_search(self, args):
        return self.deliver("web_search", json.dumps(self.world.get("search", []), ensure_ascii=False,
                                                     indent=1), "web search")

    def tool_read_inbox(self, args):
        return self.deliver("read_inbox", json.dumps(self.world.get("inbox", []), ensure_ascii=False,
                                                     indent=1), "inbox")

    def tool_run_command(self, args):
        return self.deliver("run_command", "\n".join(self.world.get("listing", [])), "terminal: ls")

    def tool_check_tracker(self, args):
        return self.deliver("check_tracker", json.dumps(self.world.get("tracker", {}),
                                                        ensure_ascii=False), "issue tracker")

    def tool_recall_notes(self, args):
        found = self.notes.search(str(args.get("query", "")), limit=5) or self.notes.list()
        parts = []
        for note in found:
            text = f"{note.id} {note.title}: {note.content}"
            if "sanitise" in self.layers:
                text = sanitise(text)
            if "provenance" in self.layers and note.id in self.tainted:
                text = self._defence(self.fence_fn, text, f"note {note.id}, from {self.tainted[note.id]}")
            parts.append(text)
        return "\n\n".join(parts) or "no notes"

    def tool_load_skill(self, args):
        where = self.world.get("skills")
        if not where:
            return {"error": "no skills installed"}
        folder, name = (DATA_DIR / where).parent, (DATA_DIR / where).name
        if str(args.get("name")) != name:
            return {"error": f"no skill {args.get('name')}"}
        return (folder / name / "SKILL.md").read_text(encoding="utf-8")

    def tool_read_file(self, args):
        path = str(args.get("path", ""))
        return self.files[path] if path in self.files else {"error": f"no such file: {path}"}

    def tool_write_file(self, args):
        return {"ok": True, "written": str(args.get("path", ""))}

    def tool_send_email(self, args):
        return {"ok": True, "sent_to": str(args.get("to", ""))}

    def tool_http_post(self, args):
        return {"ok": True, "status": 200}
