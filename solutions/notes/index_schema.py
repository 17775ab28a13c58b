"""The index's schema, the rows it hands out, and what counts as damage (see index.py).

A row is checked when it is read (`Row.note`, `Row.brief`); a schema is compared with the one made
from SCHEMA on every open; `damaged` says which errors mean "rebuild the index from the notes".
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone
from typing import NamedTuple

from course.givens.notes import NOTE_ID, NOTE_TYPES, Note, NoteError
from solutions.notes.format import id_number

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    """CREATE TABLE notes (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    number INTEGER NOT NULL,
    file_key TEXT NOT NULL,
    problem TEXT,
    title TEXT, type TEXT, tags TEXT, created_at TEXT, updated_at TEXT, content TEXT,
    updated_us INTEGER
)""",
    "CREATE INDEX notes_recent ON notes (updated_us, number, rid) WHERE problem IS NULL",
    "CREATE INDEX notes_type ON notes (type, updated_us, number, rid) WHERE problem IS NULL",
    "CREATE INDEX notes_damaged ON notes (number, id) WHERE problem IS NOT NULL",
    "CREATE TABLE tags (tag TEXT NOT NULL, rid INTEGER NOT NULL, PRIMARY KEY (tag, rid)) WITHOUT ROWID",
    "CREATE INDEX tags_of_note ON tags (rid)",  # a note's tags are removed without a scan
    """CREATE TABLE postings (
    term TEXT NOT NULL, updated_us INTEGER NOT NULL, number INTEGER NOT NULL, rid INTEGER NOT NULL,
    PRIMARY KEY (term, updated_us, number, rid)
) WITHOUT ROWID""",
    """CREATE TABLE counts (kind TEXT NOT NULL, key TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (kind, key)) WITHOUT ROWID""",
    """CREATE TRIGGER count_type AFTER INSERT ON notes WHEN NEW.problem IS NULL BEGIN
    INSERT INTO counts VALUES ('type', NEW.type, 1) ON CONFLICT DO UPDATE SET n = n + 1; END""",
    """CREATE TRIGGER uncount_type AFTER DELETE ON notes WHEN OLD.problem IS NULL BEGIN
    UPDATE counts SET n = n - 1 WHERE kind = 'type' AND key = OLD.type; END""",
    """CREATE TRIGGER count_tag AFTER INSERT ON tags BEGIN
    INSERT INTO counts VALUES ('tag', NEW.tag, 1) ON CONFLICT DO UPDATE SET n = n + 1; END""",
    """CREATE TRIGGER uncount_tag AFTER DELETE ON tags BEGIN
    UPDATE counts SET n = n - 1 WHERE kind = 'tag' AND key = OLD.tag; END""",
)


def expected_schema() -> frozenset:
    """What sqlite_master holds in a database made from SCHEMA (compared on every open)."""
    db = sqlite3.connect(":memory:")
    try:
        for statement in SCHEMA:
            db.execute(statement)
        return frozenset(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
    finally:
        db.close()


SCHEMA_ROWS = expected_schema()
COLUMNS = ("rid, id, number, file_key, problem, title, type, tags, created_at, updated_at, content, "
            "updated_us")


class Row(NamedTuple):
    rid: int
    id: str
    number: int
    file_key: str
    problem: str | None
    title: str | None
    type: str | None
    tags: str | None
    created_at: str | None
    updated_at: str | None
    content: str | None
    updated_us: int | None

    def note(self) -> Note:
        """The note this row holds; IndexDamaged if the row is not one the index writes."""
        try:
            tags = json.loads(self.tags)
            if not isinstance(tags, list):
                raise ValueError("its tags are not a list")
            note = Note(self.id, self.title, self.type, tuple(tags), self.created_at,
                        self.updated_at, self.content)
            if (self.problem is not None or self.number != id_number(note.id)
                    or self.updated_us != micros(note.updated_at)):
                raise ValueError("its columns disagree")
        except (NoteError, TypeError, ValueError) as exc:
            raise IndexDamaged(f"the index's row for {str(self.id)[:40]!r} is malformed ({exc})") from None
        return note

    def brief(self) -> dict:
        """Id, title, type and update time, checked like `note` checks the whole row."""
        if not (isinstance(self.id, str) and NOTE_ID.fullmatch(self.id) and self.problem is None
                and isinstance(self.title, str) and self.title.strip()
                and self.type in NOTE_TYPES and isinstance(self.updated_at, str)):
            raise IndexDamaged(f"the index's row for {str(self.id)[:40]!r} is malformed")
        return {"id": self.id, "title": self.title, "type": self.type, "updated_at": self.updated_at}


class IndexDamaged(NoteError):
    """The index is not what a NoteTool wrote: the caller rebuilds it from the note files."""


def micros(moment: datetime) -> int:
    """Microseconds since 1970 (UTC): orders notes exactly like their updated_at."""
    return (moment - _EPOCH) // timedelta(microseconds=1)


def damaged(exc: BaseException) -> bool:
    """Whether an error means the index is damaged or not ours (and so should be rebuilt from
    the files), rather than a busy disk or a mistake in a query."""
    if isinstance(exc, IndexDamaged):
        return True
    if type(exc) is sqlite3.DatabaseError:  # "file is not a database", "disk image is malformed"
        return True
    if isinstance(exc, sqlite3.IntegrityError):  # rows our writes cannot make (orphans, copies)
        return True
    return isinstance(exc, sqlite3.OperationalError) and str(exc).startswith(
        ("no such table", "no such column"))
