"""The JSON-index NoteTool: the design Chapter 06 first shipped, kept to measure the index against.

One `index.json` holds every note's metadata and is rewritten whole on every create, update
and delete; `search` and `list` read the notes themselves (each file parsed once and kept
until its size or time changes, but every file checked on every search). Correct under one
lock, and simple, but every write costs a rewrite of the whole index and every search a look at
every file: both grow with the number of notes. The lesson times it next to `NoteTool`.

It supports what the comparison needs (create, update, read, search, list) and nothing more.
"""
from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Callable

from solutions.notes import (Note, NoteNotFound, check_note_id, id_number, note_path,
                             read_note_file, render_note, search_notes, utc_now, write_atomic)
from solutions.notes.files import lstat_key
from course.givens.notes import NOTE_FILE, NoteFormatError, check_tags

INDEX_FILE = "index.json"


class JsonIndexNoteTool:
    def __init__(self, folder, clock: Callable[[], datetime] | None = None):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.clock = clock or utc_now
        self._index: dict = {}
        self._cache: dict[str, tuple[str, Note]] = {}

    @contextmanager
    def _locked(self):
        fd = os.open(self.folder, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                self._index = json.loads((self.folder / INDEX_FILE).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self._rebuild()
            yield
        finally:
            os.close(fd)

    def _rebuild(self) -> None:
        notes = {}
        for name in sorted(os.listdir(self.folder)):
            match = NOTE_FILE.fullmatch(name)
            if match:
                try:
                    notes[match.group(1)] = self._meta(self._load(match.group(1)))
                except NoteFormatError:
                    continue
        next_id = max(map(id_number, notes), default=0) + 1
        self._index = {"format": 1, "next_id": next_id, "notes": notes}
        self._save()

    @staticmethod
    def _meta(note: Note) -> dict:
        meta = note.front_matter()
        del meta["id"]
        return meta

    def _save(self) -> None:
        text = json.dumps(self._index, ensure_ascii=False, sort_keys=True, indent=1) + "\n"
        write_atomic(self.folder / INDEX_FILE, text)

    def _load(self, note_id: str) -> Note:
        cached = self._cache.get(note_id)
        if cached and cached[0] == lstat_key(self.folder, note_id):
            return cached[1]
        key, note = read_note_file(self.folder, note_id)
        self._cache[note_id] = (key, note)
        return note

    def _store(self, note: Note) -> Note:
        write_atomic(note_path(self.folder, note.id), render_note(note))
        self._index["notes"][note.id] = self._meta(note)
        self._save()  # the whole index, every time
        return note

    def create(self, title: str, content: str = "", type: str = "general", tags=()) -> Note:
        with self._locked():
            now = self.clock()
            number = self._index["next_id"]
            self._index["next_id"] = number + 1
            return self._store(Note(f"note-{number:04d}", title, type, check_tags(tags), now, now,
                                    content))

    def read(self, note_id: str) -> Note:
        check_note_id(note_id)
        with self._locked():
            if note_id not in self._index["notes"]:
                raise NoteNotFound(f"no note {note_id}")
            return self._load(note_id)

    def update(self, note_id: str, **changes) -> Note:
        check_note_id(note_id)
        with self._locked():
            old = self._load(note_id)
            return self._store(replace(old, updated_at=self.clock(), **changes))

    def search(self, query: str, limit: int = 10) -> list[Note]:
        with self._locked():
            notes = [self._load(i) for i in self._index["notes"]]  # every file, every time
        return search_notes(notes, query, limit)

    def list(self) -> list[Note]:
        with self._locked():
            notes = [self._load(i) for i in self._index["notes"]]
        return sorted(notes, key=lambda n: (-n.updated_at.timestamp(), -id_number(n.id)))
