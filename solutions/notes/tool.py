"""NoteTool: the seven actions over one folder of notes, with the index kept honest.

The promises, and how each is kept:

- **The files are the truth.** The index (index.py) is a cache. It records each file's key
  (inode, size, modification and change times), and before every call the tool makes sure the
  two agree: when it opens the folder it checks every file; after that, the kernel tells it
  which files changed in the meantime (watch.py: a note edited by hand, added, removed, or
  written by a writer that crashed before updating the index), and only those are checked.
  A note returned by a search or read is checked once more on its own. A file that changed is
  read again and its row replaced: the index heals itself. (Where the kernel cannot tell, as on
  macOS, every file is checked when the folder changed and before `list` and `summary`.)
- **A damaged file hurts only itself.** It is listed in `problems` and `summary()["damaged"]`,
  left untouched, and its id stays taken; every other note lists and searches as usual.
- **Ids are never reused**: a delete leaves a tombstone in `.deleted/`, and the highest id ever
  seen is kept in the index and in `.highest-id`, and survives a rebuild.
- **Writes are atomic**: a temporary file, flushed, renamed over the note. Leftovers of a killed
  writer (`.tmp-*.part`) are removed the next time the folder is checked.
- **Two writers lose nothing**: every operation holds an exclusive `flock` on the folder.
  (fcntl locks need Linux or macOS.)
"""
from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, Union

from solutions.gssc import Packet, query_terms
from solutions.notes import adapters, files
from solutions.notes.format import (NOTE_FILE, NOTE_TYPES, Note, NoteError, NoteFormatError,
                                    NoteNotFound, check_note_id, check_tags, check_time,
                                    check_type, id_number, note_path, render_note, utf8_text)
from solutions.notes.index import NoteIndex, Row, damaged
from solutions.notes.search import check_limit
from solutions.notes.watch import FolderWatch

LEGACY_INDEX = "index.json"  # the JSON index of the course's first NoteTool, read once if found


def utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


class NoteTool:
    """Notes in one folder: create, read, update, search, list, summary, delete.

        tool = NoteTool("project_notes")
        note = tool.create("zlib missing", "Could NOT find ZLIB ...", type="blocker", tags=["zlib"])
        tool.search("找不到 zlib")

    `clock` returns the time stamped on notes (default: now, UTC, whole seconds); lessons pass
    a fixed clock so their output is reproducible.
    """

    def __init__(self, folder: Union[str, Path], clock: Callable[[], datetime] | None = None):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._dir = str(self.folder)
        self.clock = clock or utc_now
        self.index = NoteIndex(self.folder)
        self._opened_ino: int | None = None  # the database file this tool has open
        self._watch = FolderWatch.__new__(FolderWatch)  # started when the folder is opened
        self._watch.fd = None
        self._cache: dict[str, tuple[str, Note]] = {}  # id -> (file key, note)
        self._thread_lock = threading.Lock()
        with self._locked():  # open now: check the files, remove leftovers, build a missing index
            pass

    # ----------------------------------------------------------------- locking and checking

    @contextmanager
    def _locked(self, check_all: bool = False):
        with self._thread_lock:
            fd = os.open(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd is closed
                try:
                    self._sync(check_all)
                except sqlite3.DatabaseError as exc:  # a damaged database: rebuild from the files
                    if not damaged(exc):
                        raise
                    self._discard_index()
                    self._sync(check_all)
                try:
                    yield
                except sqlite3.DatabaseError as exc:
                    if not damaged(exc):
                        raise
                    self._discard_index()
                    raise NoteError(f"the index was damaged ({exc}); it has been discarded and "
                                    "is rebuilt from the note files on the next call") from None
            finally:
                os.close(fd)

    def _discard_index(self) -> None:
        self.index.close()
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{self.index.path}{suffix}")
            except FileNotFoundError:
                pass
        self._opened_ino = None

    def _sync(self, check_all: bool) -> None:
        """Bring the index in step with the files before an operation (see the module docstring)."""
        try:
            current = os.stat(self.index.path).st_ino
        except FileNotFoundError:
            current = None
        if self._opened_ino is None or current != self._opened_ino:
            self.index.close()
            fresh = self.index.open()
            self._opened_ino = os.stat(self.index.path).st_ino
            self._cache.clear()
            self._watch.close()
            self._watch = FolderWatch(self.folder)  # before the check: nothing falls in between
            if fresh:
                self._rebuild()
            else:
                self._check_files()
            return
        if self._watch.active:
            changed = self._watch.changes()
            if changed is not None:
                if changed:
                    self._check_names(changed)
                return
            self._watch = FolderWatch(self.folder)  # the watch lost events: start again
            self._check_files()
        elif check_all or self.index.get("folder_key") != files.folder_key(self.folder):
            self._check_files()

    def _scan(self) -> tuple[dict[str, str], list[str]]:
        """Every note file's key, and the names of leftover temporary files."""
        on_disk, leftovers = {}, []
        with os.scandir(self.folder) as entries:
            for entry in entries:
                match = NOTE_FILE.fullmatch(entry.name)
                if match:
                    try:
                        on_disk[match.group(1)] = files.file_key(entry.stat(follow_symlinks=False))
                    except FileNotFoundError:
                        pass
                elif files.TEMPORARY.fullmatch(entry.name):
                    leftovers.append(entry.name)
        return on_disk, leftovers

    def _check_files(self) -> None:
        """Compare every note file's key with the index; re-read what changed, drop what is
        gone, remove leftovers of killed writers."""
        on_disk, leftovers = self._scan()
        files.remove_leftovers(self.folder, leftovers)
        indexed = self.index.file_keys()
        with self.index.transaction():
            for note_id in indexed.keys() - on_disk.keys():
                self.index.remove(note_id)
                self._cache.pop(note_id, None)
            for note_id, key in on_disk.items():
                if indexed.get(note_id) != key:
                    self._index_file(note_id)
            self.index.raise_highest(max(map(id_number, on_disk), default=0))
            self.index.set("folder_key", files.folder_key(self.folder))

    def _check_names(self, names: set[str]) -> None:
        """Check the note files the watch named (created, written, renamed, removed)."""
        ids = {m.group(1) for name in names if (m := NOTE_FILE.fullmatch(name))}
        with self.index.transaction():
            for note_id in ids:
                row, key = self.index.row(note_id), files.lstat_key(self.folder, note_id)
                if key is None:
                    self.index.remove(note_id)
                    self._cache.pop(note_id, None)
                elif row is None or row.file_key != key:
                    self._index_file(note_id)
                    self.index.raise_highest(id_number(note_id))
            self.index.set("folder_key", files.folder_key(self.folder))

    def _index_file(self, note_id: str) -> None:
        """Read one note file into the index (inside a transaction): as a note, or as damaged."""
        try:
            key, note = files.read_note_file(self.folder, note_id)
        except NoteNotFound:
            self.index.remove(note_id)
            self._cache.pop(note_id, None)
            return
        except NoteFormatError as exc:
            self.index.put_problem(note_id, files.lstat_key(self.folder, note_id) or "?", str(exc))
            self._cache.pop(note_id, None)
            return
        self.index.put(note, key)
        self._cache[note_id] = (key, note)

    def _rebuild(self) -> None:
        """Recreate the index from the note files, keeping the highest id ever seen."""
        on_disk, leftovers = self._scan()
        files.remove_leftovers(self.folder, leftovers)
        highest = max([self.index.salvaged_highest, self._legacy_highest(),
                       files.read_highest(self.folder),
                       *map(id_number, files.tombstone_ids(self.folder)), *map(id_number, on_disk)])
        items = []
        for note_id in sorted(on_disk, key=lambda i: (id_number(i), i)):
            try:
                key, note = files.read_note_file(self.folder, note_id)
                items.append((note_id, key, note, None))
            except NoteNotFound:
                continue
            except NoteFormatError as exc:
                items.append((note_id, files.lstat_key(self.folder, note_id) or "?", None, str(exc)))
        with self.index.transaction():
            highest = max(highest, self.index.highest())
            self.index.replace_all(items)
            self.index.set("highest", highest)
            self.index.set("folder_key", files.folder_key(self.folder))
        self.index.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # a rebuild writes every page
        self._cache = {i: (key, note) for i, key, note, _ in items if note is not None}
        legacy = self.folder / LEGACY_INDEX
        if legacy.is_file() and not legacy.is_symlink():
            legacy.unlink()  # its next id is kept; the SQLite index replaces it
            self.index.set("folder_key", files.folder_key(self.folder))

    def _legacy_highest(self) -> int:
        try:
            next_id = json.loads((self.folder / LEGACY_INDEX).read_text(encoding="utf-8"))["next_id"]
            return next_id - 1 if isinstance(next_id, int) and next_id > 0 else 0
        except (OSError, ValueError, KeyError, TypeError):
            return 0

    def _current(self, note_id: str) -> Note:
        """The note as its file holds it now (the index healed first if the file changed)."""
        row = self.index.row(note_id)
        key = files.lstat_key(self.folder, note_id)
        if row is None or key != row.file_key:
            with self.index.transaction():
                if key is None:
                    self.index.remove(note_id)
                else:
                    self._index_file(note_id)
            row = self.index.row(note_id)
        if row is None:
            if files.has_tombstone(self.folder, note_id):
                raise NoteNotFound(f"note {note_id} was deleted")
            raise NoteNotFound(f"no note {note_id}")
        if row.problem is not None:
            raise NoteFormatError(f"{row.problem} (the file is left as it is: fix or remove it)")
        return self._note(row)

    def _note(self, row: Row) -> Note:
        cached = self._cache.get(row.id)
        if cached and cached[0] == row.file_key:
            return cached[1]
        note = row.note()
        self._cache[row.id] = (row.file_key, note)
        return note

    def _verified(self, rows: list[Row]) -> bool:
        """Heal the rows whose files changed since they were indexed; True if none had."""
        stale = [r.id for r in rows if files.lstat_key(self.folder, r.id) != r.file_key]
        if stale:
            with self.index.transaction():
                for note_id in stale:
                    self._index_file(note_id)
        return not stale

    def _write(self, note: Note, text: str | None = None) -> Note:
        """Write the note file atomically, then its row in the index."""
        text = render_note(note) if text is None else text  # raises before anything is written
        files.write_atomic(note_path(self.folder, note.id), text)
        key = files.lstat_key(self.folder, note.id)
        with self.index.transaction():
            self.index.put(note, key)
            self.index.raise_highest(id_number(note.id))
            self.index.set("folder_key", files.folder_key(self.folder))
        self._cache[note.id] = (key, note)
        return note

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
        with self._locked():
            now = self._now()
            number = max(self.index.highest(), files.read_highest(self.folder)) + 1
            while (os.path.lexists(note_path(self.folder, f"note-{number:04d}"))
                   or files.has_tombstone(self.folder, f"note-{number:04d}")):
                number += 1  # only if someone put files there behind the index's back
            note = Note(f"note-{number:04d}", title, type, check_tags(tags), now, now, content)
            text = render_note(note)  # refuse bad input before the id is spent
            files.write_highest(self.folder, number)
            return self._write(note, text)

    def read(self, note_id: str) -> Note:
        check_note_id(note_id)
        with self._locked():
            return self._current(note_id)

    def update(self, note_id: str, *, title: str | None = None, content: str | None = None,
               type: str | None = None, tags: Sequence[str] | None = None) -> Note:
        """Change the fields given (None leaves a field as it is) and stamp updated_at."""
        check_note_id(note_id)
        with self._locked():
            old = self._current(note_id)
            changes: dict[str, Any] = {"updated_at": self._now()}
            if title is not None:
                changes["title"] = title
            if content is not None:
                changes["content"] = content
            if type is not None:
                changes["type"] = type
            if tags is not None:
                changes["tags"] = check_tags(tags)
            return self._write(replace(old, **changes))  # replace() validates like a new note

    def delete(self, note_id: str) -> Note:
        """Remove a note; its id stays taken for ever (a tombstone in .deleted/)."""
        check_note_id(note_id)
        with self._locked():
            note = self._current(note_id)
            # Tombstone first: if we crash after it, the id is still never reused.
            files.make_tombstone(self.folder, note_id)
            os.unlink(note_path(self.folder, note_id))
            with self.index.transaction():
                self.index.remove(note_id)
                self.index.set("folder_key", files.folder_key(self.folder))
            self._cache.pop(note_id, None)
            return note

    def list(self, type: str | None = None, tags: Sequence[str] | None = None,
             limit: int | None = None) -> list[Note]:
        """Notes with that type and all those tags, most recently updated first."""
        type, tags = self._filters(type, tags)
        if limit is not None:
            check_limit(limit)
        with self._locked(check_all=True):
            return [self._note(r) for r in self.index.newest(type, tags, limit)]

    def search(self, query: str, limit: int = 10, type: str | None = None,
               tags: Sequence[str] | None = None) -> list[Note]:
        """Notes matching `query` (ranked like `search_notes`), optionally filtered like `list`."""
        check_limit(limit)
        wanted = query_terms(utf8_text(query, "query"))
        type, tags = self._filters(type, tags)
        with self._locked():
            rows = self.index.search(wanted, limit, type, tags)
            if not self._verified(rows):  # a file changed in place: rank again with its new text
                rows = self.index.search(wanted, limit, type, tags)
            return [self._note(r) for r in rows]

    def summary(self) -> dict:
        """Counts by type and tag, the open blockers, the five latest notes, damaged files."""
        with self._locked(check_all=True):
            rows = self.index.summary_rows()
            damaged = self.index.problems()
        by_type = {t: rows["by_type"].get(t, 0) for t in NOTE_TYPES}

        def brief(row: Row) -> dict:
            return {"id": row.id, "title": row.title, "type": row.type, "updated_at": row.updated_at}

        return {
            "total": sum(by_type.values()),
            "by_type": by_type,
            "tags": dict(rows["tags"]),
            "blockers": [brief(r) for r in rows["blockers"]],
            "recent": [brief(r) for r in rows["recent"]],
            "damaged": [{"id": i, "problem": p} for i, p in damaged],
        }

    @property
    def problems(self) -> list[str]:
        """Why each damaged note file cannot be read (they are left untouched)."""
        with self._locked():
            return [problem for _, problem in self.index.problems()]

    def rebuild_index(self) -> list[str]:
        """Rebuild the index from the note files now; returns the problems found."""
        with self._locked():
            self._rebuild()
            return [problem for _, problem in self.index.problems()]

    # ----------------------------------------------------------------- as a source and a tool

    def as_source(self, limit: int = 8) -> Callable[[str], list[Packet]]:
        """A GSSC source: for a task, the notes that match it plus every open blocker."""
        return adapters.notes_source(self, limit)

    def run(self, arguments: Mapping[str, Any]) -> dict:
        """Tool-call entry point: {"action": ..., ...} in, a JSON-ready dict out.
        Bad input never raises; it comes back as {"ok": False, "error": "..."}."""
        return adapters.run_action(self, arguments)
