"""Keeping a notes folder and its index in step: the files are the truth, the index a cache.

The index (index.py) records each note file's key (inode, size, modification and change
times). Before every call the two are made to agree:

- when a tool opens the folder, every file is checked: a file that changed is read again, a
  file that is gone leaves the index, a new one enters it, and a temporary file left by a killed
  writer (`.tmp-*.part`) is removed; a missing, damaged or foreign index is rebuilt from the
  files, keeping the highest id ever seen;
- after that, the kernel says which files changed in the meantime (watch.py: a note edited by
  hand, added, removed, or written by a writer that crashed before updating the index), and only
  those are checked. Where it cannot say (macOS), every file is checked when the folder itself
  changed and before every answer about the whole folder (`list`, `summary`, `search`), which
  then costs one `stat` per note;
- a note about to be returned or changed is checked once more on its own.

The index is checked too, at the point of use (index.py says how): a database that is not a
regular file of its own, a schema that is not ours, a commit no NoteTool made, a row that is
malformed or disagrees with the rows around it. Whoever meets such damage does the same thing,
whatever the damage: discard the index, rebuild it from the note files, and run the action again
(`IndexedFolder.call`). An action changes a note file only after its last read of the index,
and what it then writes to the index is healed the same way, so no change is ever made twice.

A file that cannot be read is recorded as damaged, with the reason, and left as it is.
Every call holds an exclusive `flock` on the folder, so two processes never interleave.
(fcntl locks need Linux or macOS.)
"""
from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, TypeVar

from solutions.notes import files
from course.givens.notes import NOTE_FILE, Note, NoteError, NoteFormatError, NoteNotFound
from solutions.notes.format import id_number, note_path, render_note
from solutions.notes.index import NoteIndex
from solutions.notes.index_schema import IndexDamaged, Row, damaged
from solutions.notes.watch import FolderWatch

LEGACY_INDEX = "index.json"  # the JSON index of the course's first NoteTool, read once if found
T = TypeVar("T")


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file is at `path` (device, inode), without following a symbolic link."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


class IndexedFolder:
    """One notes folder and its index, kept in step. Use every method inside `locked()`."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.index = NoteIndex(self.folder)
        self.opened: tuple[int, int] | None = None  # the database file that is open
        self.watch = FolderWatch()  # inactive until the folder is opened
        self.cache: dict[str, tuple[str, Note]] = {}  # id -> (file key, note)
        self.thread_lock = threading.Lock()
        self.files_changed = False  # whether the running action has changed a note file yet

    @contextmanager
    def _folder_lock(self):
        with self.thread_lock:
            fd = os.open(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd is closed
                yield
            finally:
                os.close(fd)

    def call(self, action: Callable[[], T], check_all: bool = False) -> T:
        """`action()` under the folder lock, the index brought in step first. If the index turns
        out damaged, before or during the action, it is rebuilt from the files and the action
        runs once more (it had changed no file: see the module docstring)."""
        with self._folder_lock():
            for attempt in (1, 2):
                self.files_changed = False
                try:
                    self.sync(check_all)
                    return action()
                except (IndexDamaged, sqlite3.Error) as exc:
                    if not damaged(exc):
                        raise
                    self.discard_index()
                    if attempt == 2 or self.files_changed:
                        raise NoteError(f"the index was damaged ({exc}) and has been discarded; "
                                        "it is rebuilt from the note files on the next call") from None

    def discard_index(self) -> None:
        self.index.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(f"{self.index.path}{suffix}")
            except (FileNotFoundError, IsADirectoryError):
                pass  # a folder planted there is removed by the next open
        self.opened = None

    def changed(self, change: Callable[[], None]) -> None:
        """Record in the index a change just made to the note files (which are the truth): a
        damaged index is rebuilt from them instead, which includes the change."""
        self.files_changed = True
        try:
            with self.index.transaction():
                change()
        except (IndexDamaged, sqlite3.Error) as exc:
            if not damaged(exc):
                raise
            self.discard_index()
            self.sync(check_all=False)

    def sync(self, check_all: bool) -> None:
        """Bring the index in step with the files before an operation (see the module docstring)."""
        if self.opened is None or _identity(self.index.path) != self.opened:
            self.index.close()
            fresh = self.index.open()
            self.opened = _identity(self.index.path)
            self.cache.clear()
            self.watch.close()
            self.watch = FolderWatch(self.folder)  # before the check: nothing falls in between
            if fresh:
                self.rebuild()
            else:
                self.check_files()
            return
        if self.index.changed_behind():
            raise IndexDamaged("the index was changed by something other than a NoteTool")
        if self.watch.active:
            changed = self.watch.changes()
            if changed is not None:
                if changed:
                    self.check_names(changed)
                return
            self.watch = FolderWatch(self.folder)  # the watch lost events: start again
            self.check_files()
        elif check_all or self.index.get("folder_key") != files.folder_key(self.folder):
            self.check_files()

    def scan(self) -> tuple[dict[str, str], list[str]]:
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

    def check_files(self) -> None:
        """Compare every note file's key with the index; re-read what changed, drop what is
        gone, remove leftovers of killed writers."""
        on_disk, leftovers = self.scan()
        files.remove_leftovers(self.folder, leftovers)
        indexed = self.index.file_keys()
        with self.index.transaction():
            for note_id in indexed.keys() - on_disk.keys():
                self.index.remove(note_id)
                self.cache.pop(note_id, None)
            for note_id, key in on_disk.items():
                if indexed.get(note_id) != key:
                    self.index_file(note_id)
            self.index.raise_highest(max(map(id_number, on_disk), default=0))
            self.index.set("folder_key", files.folder_key(self.folder))

    def check_names(self, names: set[str]) -> None:
        """Check the note files the watch named (created, written, renamed, removed)."""
        ids = {m.group(1) for name in names if (m := NOTE_FILE.fullmatch(name))}
        with self.index.transaction():
            for note_id in ids:
                row, key = self.index.row(note_id), files.lstat_key(self.folder, note_id)
                if key is None:
                    self.index.remove(note_id)
                    self.cache.pop(note_id, None)
                elif row is None or row.file_key != key:
                    self.index_file(note_id)
                    self.index.raise_highest(id_number(note_id))
            self.index.set("folder_key", files.folder_key(self.folder))

    def index_file(self, note_id: str) -> None:
        """Read one note file into the index (inside a transaction): as a note, or as damaged."""
        try:
            key, note = files.read_note_file(self.folder, note_id)
        except NoteNotFound:
            self.index.remove(note_id)
            self.cache.pop(note_id, None)
            return
        except NoteFormatError as exc:
            self.index.put_problem(note_id, files.lstat_key(self.folder, note_id) or "?", str(exc))
            self.cache.pop(note_id, None)
            return
        self.index.put(note, key)
        self.cache[note_id] = (key, note)

    def rebuild(self) -> None:
        """Recreate the index from the note files, keeping the highest id ever seen."""
        on_disk, leftovers = self.scan()
        files.remove_leftovers(self.folder, leftovers)
        highest = max([self.index.salvaged_highest, self.legacy_highest(),
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
        self.cache = {i: (key, note) for i, key, note, _ in items if note is not None}
        legacy = self.folder / LEGACY_INDEX
        if legacy.is_file() and not legacy.is_symlink():
            legacy.unlink()  # its next id is kept; the SQLite index replaces it
            with self.index.transaction():
                self.index.set("folder_key", files.folder_key(self.folder))

    def legacy_highest(self) -> int:
        try:
            next_id = json.loads((self.folder / LEGACY_INDEX).read_text(encoding="utf-8"))["next_id"]
            return next_id - 1 if isinstance(next_id, int) and next_id > 0 else 0
        except (OSError, ValueError, KeyError, TypeError):
            return 0

    def current(self, note_id: str) -> Note:
        """The note as its file holds it now (the index healed first if the file changed)."""
        row = self.index.row(note_id)
        key = files.lstat_key(self.folder, note_id)
        if row is None or key != row.file_key:
            with self.index.transaction():
                if key is None:
                    self.index.remove(note_id)
                else:
                    self.index_file(note_id)
            row = self.index.row(note_id)
        if row is None:
            if files.has_tombstone(self.folder, note_id):
                raise NoteNotFound(f"note {note_id} was deleted")
            raise NoteNotFound(f"no note {note_id}")
        if row.problem is not None:
            raise NoteFormatError(f"{row.problem} (the file is left as it is: fix or remove it)")
        return self.note(row)

    def note(self, row: Row) -> Note:
        cached = self.cache.get(row.id)
        if cached and cached[0] == row.file_key:
            return cached[1]
        note = row.note()
        self.cache[row.id] = (row.file_key, note)
        return note

    def verified(self, rows: list[Row]) -> bool:
        """Heal the rows whose files changed since they were indexed; True if none had."""
        stale = [r.id for r in rows if files.lstat_key(self.folder, r.id) != r.file_key]
        if stale:
            with self.index.transaction():
                for note_id in stale:
                    self.index_file(note_id)
        return not stale

    def write(self, note: Note, text: str | None = None) -> Note:
        """Write the note file atomically, then its row in the index."""
        text = render_note(note) if text is None else text  # raises before anything is written
        files.write_atomic(note_path(self.folder, note.id), text)
        key = files.lstat_key(self.folder, note.id)

        def record():
            self.index.put(note, key)
            self.index.raise_highest(id_number(note.id))
            self.index.set("folder_key", files.folder_key(self.folder))
        self.changed(record)
        self.cache[note.id] = (key, note)
        return note

    def next_number(self) -> int:
        """The number of a new note: above every id ever seen, and free on disk."""
        number = max(self.index.highest(), files.read_highest(self.folder)) + 1
        while (os.path.lexists(note_path(self.folder, f"note-{number:04d}"))
               or files.has_tombstone(self.folder, f"note-{number:04d}")):
            number += 1  # only if someone put files there behind the index's back
        return number

    def delete(self, note_id: str) -> Note:
        note = self.current(note_id)
        # Tombstone first: if we crash after it, the id is still never reused.
        files.make_tombstone(self.folder, note_id)
        os.unlink(note_path(self.folder, note_id))

        def record():
            self.index.remove(note_id)
            self.index.set("folder_key", files.folder_key(self.folder))
        self.changed(record)
        self.cache.pop(note_id, None)
        return note

    def problems(self) -> list[str]:
        return [problem for _, problem in self.index.problems()]

