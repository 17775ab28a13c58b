"""NoteTool: the seven actions an agent calls, over one folder of notes.

Its promises, and where each is kept:

- **the files are the truth**: the index is a cache, checked against the files before every call
  and healed from them (sync.py); a damaged file is reported, left as it is, and hurts no other
  note;
- **ids are never reused**: a delete leaves a tombstone in `.deleted/`, and the highest id ever
  given out is kept in the index and in `.highest-id` (files.py), and survives a rebuild;
- **writes are atomic**: a temporary file, flushed, renamed over the note (files.py);
- **two writers lose nothing**: every call holds an exclusive lock on the folder (sync.py);
- **every action costs the same with ten notes or ten thousand**: it touches one note's file
  and one note's rows in the index; a search reads only the index (index.py).
"""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, Union

from solutions.gssc import Packet, query_terms
from solutions.notes import adapters, files
from course.givens.notes import NOTE_TYPES, Note, check_tags, check_time, check_type, utf8_text
from solutions.notes.format import check_note_id, render_note
from solutions.notes.index_schema import IndexDamaged
from solutions.notes.search import check_limit
from solutions.notes.sync import LEGACY_INDEX, IndexedFolder

__all__ = ["LEGACY_INDEX", "NoteTool", "SUMMARY_BLOCKERS", "utc_now"]

SUMMARY_BLOCKERS = 10  # a summary names the newest ten open blockers; by_type counts them all


def utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


class NoteTool:
    """Notes in one folder: create, read, update, search, list, summary, delete.

        tool = NoteTool("project_notes")
        note = tool.create("zlib missing", "Could NOT find ZLIB ...", type="blocker", tags=["zlib"])
        tool.search("找不到 zlib")

    Making the tool opens the folder: the files are checked against the index (which is built
    if missing) and leftovers of killed writers are removed. `clock` returns the time stamped on
    notes (default: now, UTC, whole seconds); lessons pass a fixed clock so their output is
    reproducible.
    """

    def __init__(self, folder: Union[str, Path], clock: Callable[[], datetime] | None = None):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.clock = clock or utc_now
        self._store = IndexedFolder(self.folder)
        self.index = self._store.index
        self._store.call(lambda: None)

    def _now(self) -> datetime:
        return check_time(self.clock(), "the clock's time")

    @staticmethod
    def _filters(type: str | None, tags: Sequence[str] | None) -> tuple[str | None, tuple]:
        if type is not None:
            check_type(type)
        return type, (check_tags(tags) if tags is not None else ())

    # ----------------------------------------------------------------- the seven actions

    def create(self, title: str, content: str = "", type: str = "general",
               tags: Sequence[str] = ()) -> Note:
        def create():
            now = self._now()
            number = self._store.next_number()
            note = Note(f"note-{number:04d}", title, type, check_tags(tags), now, now, content)
            text = render_note(note)  # refuse bad input before the id is spent
            files.write_highest(self.folder, number)
            return self._store.write(note, text)
        return self._store.call(create)

    def read(self, note_id: str) -> Note:
        check_note_id(note_id)
        return self._store.call(lambda: self._store.current(note_id))

    def update(self, note_id: str, *, title: str | None = None, content: str | None = None,
               type: str | None = None, tags: Sequence[str] | None = None) -> Note:
        """Change the fields given (None leaves a field as it is) and stamp updated_at."""
        check_note_id(note_id)

        def update():
            old = self._store.current(note_id)
            changes: dict[str, Any] = {"updated_at": self._now()}
            if title is not None:
                changes["title"] = title
            if content is not None:
                changes["content"] = content
            if type is not None:
                changes["type"] = type
            if tags is not None:
                changes["tags"] = check_tags(tags)
            return self._store.write(replace(old, **changes))  # replace() validates like new
        return self._store.call(update)

    def delete(self, note_id: str) -> Note:
        """Remove a note; its id stays taken for ever (a tombstone in .deleted/)."""
        check_note_id(note_id)
        return self._store.call(lambda: self._store.delete(note_id))

    def list(self, type: str | None = None, tags: Sequence[str] | None = None,
             limit: int | None = None) -> list[Note]:
        """Notes with that type and all those tags, most recently updated first."""
        type, tags = self._filters(type, tags)
        if limit is not None:
            check_limit(limit)
        return self._store.call(
            lambda: [self._store.note(r) for r in self.index.newest(type, tags, limit)],
            check_all=True)

    def search(self, query: str, limit: int = 10, type: str | None = None,
               tags: Sequence[str] | None = None) -> list[Note]:
        """Notes matching `query` (ranked like `search_notes`), optionally filtered like `list`."""
        check_limit(limit)
        wanted = query_terms(utf8_text(query, "query"))
        type, tags = self._filters(type, tags)

        def search():
            rows = self.index.search(wanted, limit, type, tags)
            if not self._store.verified(rows):  # a file changed in place: rank with its new text
                rows = self.index.search(wanted, limit, type, tags)
            return [self._store.note(r) for r in rows]
        return self._store.call(search, check_all=True)

    def summary(self) -> dict:
        """Counts by type and tag, the newest open blockers (`SUMMARY_BLOCKERS`; by_type counts
        every one), the five latest notes, damaged files. Its cost does not grow with the notes:
        the counts are kept by the index, the lists are read newest first and stop."""
        def summary():
            counted = dict(self.index.counts("type"))
            by_type = {t: counted.pop(t, 0) for t in NOTE_TYPES}
            if counted:
                raise IndexDamaged(f"the index counts notes of unknown types {sorted(counted)[:3]}")
            return {
                "total": sum(by_type.values()),
                "by_type": by_type,
                "tags": dict(self.index.counts("tag")),
                "blockers": [r.brief() for r in self.index.briefs("blocker", SUMMARY_BLOCKERS)],
                "recent": [r.brief() for r in self.index.briefs(limit=5)],
                "damaged": [{"id": i, "problem": p} for i, p in self.index.problems()],
            }
        return self._store.call(summary, check_all=True)

    @property
    def problems(self) -> list[str]:
        """Why each damaged note file cannot be read (they are left untouched)."""
        return self._store.call(self._store.problems)

    def rebuild_index(self) -> list[str]:
        """Rebuild the index from the note files now; returns the problems found."""
        def rebuild():
            self._store.rebuild()
            return self._store.problems()
        return self._store.call(rebuild)

    # ----------------------------------------------------------------- as a source and a tool

    def as_source(self, limit: int = 8) -> Callable[[str], list[Packet]]:
        """A GSSC source: for a task, the notes that match it plus every open blocker."""
        return adapters.notes_source(self, limit)

    def run(self, arguments: Mapping[str, Any]) -> dict:
        """Tool-call entry point: {"action": ..., ...} in, a JSON-ready dict out.
        Bad input never raises; it comes back as {"ok": False, "error": "..."}."""
        return adapters.run_action(self, arguments)
