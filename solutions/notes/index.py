"""The index: what the machine reads instead of every note file, kept in SQLite (standard library).

The note files are for people: Markdown and YAML they can read, edit, diff and keep in git.
The index is for the machine: one SQLite database in `.index/` that answers "which notes are
blockers", "which notes match 找不到 zlib" or "what is the highest id" without opening every
file. It is only a cache of the files: delete it and it is rebuilt from them.

    meta      format, the highest id ever seen, the folder's key when the index last matched it
    notes     one row per note file: its file key (to notice a changed file), its fields, or the
              reason it cannot be read ("problem") for a damaged file
    tags      tag -> note
    postings  term -> note, one row per note and search term (Chapter 03's terms: words, and
              Chinese character pairs), ordered within a term from the oldest note to the newest

Every write touches the rows of one note, so it costs the same with ten notes or ten thousand
(SQLite's B-trees grow by a level now and then). A search ranks exactly like `search_notes`
(share of the query's terms found, then the newest, then the highest id) but reads only the
postings of the query's terms, newest notes first, a window at a time: it stops as soon as no
older note could still make the top `limit` (an older note can rank higher only by containing
more of the query's terms, and the postings say which terms still occur further back).

The index trusts nothing it finds (issue 25, item 9): its files must be regular files of its
own (a symbolic link, a folder or a hard link planted in `.index/` is removed, never followed),
its schema must be exactly this one, every row it hands out must be well formed and agree with
the rows around it, and every commit made by a NoteTool leaves a fresh `stamp`, so a commit that
changes the database without one (another program, an older copy written back) is noticed by
every tool that has it open. Anything else is `IndexDamaged`, and the caller rebuilds the index
from the note files (sync.py).

    counts    type -> number of notes, tag -> number of notes, kept by triggers, so `summary`
              never counts the whole folder

The database runs in WAL mode (one writer, readers never blocked, a commit is one append) with
`synchronous=NORMAL`: a power cut may lose the last commits of the index, never the note files
(they are flushed to disk first), and a lost commit is noticed and rebuilt like any other gap.
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Sequence

from course.givens.notes import Note, NoteError, note_terms
from solutions.notes.format import id_number
from solutions.notes.index_schema import COLUMNS, SCHEMA, SCHEMA_ROWS, IndexDamaged, Row, micros

INDEX_DIR = ".index"
DATABASE = "notes.sqlite3"
DATABASE_FILES = ("", "-wal", "-shm", "-journal")  # the database and SQLite's files beside it
FORMAT = "notes-index-2"
FIRST_WINDOW = 64      # a search looks at the newest 64 notes first, then 4 times as many...
MAX_BOUND_TERMS = 400  # longer queries pass their terms through a temporary table
def _remove(path: str | Path) -> None:
    """Remove whatever is at `path` without following it (a folder with what is in it)."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


def _own_file(path: str | Path) -> bool:
    """Whether `path` is missing or a regular file with no other name (so not a symbolic link,
    a folder, a device, or a hard link to a file elsewhere)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1


def _wal_database(path: Path) -> bool:
    """Whether `path` starts like the index's database: SQLite, in WAL mode (the header's
    read and write versions are 2). A zero-length or rollback-mode file must not be opened:
    SQLite would wait for every open tool's shared lock to write a header into it. A missing
    database is False too, so the WAL and shared-memory files left without it go with it."""
    try:
        with open(path, "rb") as f:  # a regular file of ours: checked just before
            header = f.read(20)
    except OSError:
        return False
    return header[:16] == b"SQLite format 3\x00" and header[18:20] == b"\x02\x02"


def _remove_database(path: Path) -> None:
    for suffix in DATABASE_FILES:
        _remove(f"{path}{suffix}")


class NoteIndex:
    """The SQLite index of one notes folder. Callers hold the folder lock around every use."""

    def __init__(self, folder: Path):
        self.dir = Path(folder) / INDEX_DIR
        self.path = self.dir / DATABASE
        self.db: sqlite3.Connection | None = None
        self.salvaged_highest = 0  # the highest id read from a database that had to be replaced
        self.stamp: str | None = None    # the last stamp this tool wrote or accepted
        self.version: int | None = None  # PRAGMA data_version when it did
        self.own_changes = 0  # the connection's total_changes then: rows written through it

    # ----------------------------------------------------------------- opening

    def open(self) -> bool:
        """Open the database. Returns True when it had to be (re)created empty: it was missing,
        unreadable, not this format or not only ours; the caller then rebuilds it from the
        note files. Whatever is in the index's place and is not a regular file of its own is
        removed first: SQLite would follow a symbolic link and write where it points."""
        if self.dir.is_symlink() or (self.dir.exists() and not self.dir.is_dir()):
            _remove(self.dir)
        self.dir.mkdir(exist_ok=True)
        paths = [f"{self.path}{suffix}" for suffix in DATABASE_FILES]
        if not all(map(_own_file, paths)) or not _wal_database(self.path):
            _remove_database(self.path)
        if self.path.exists():
            try:
                self.db = self._connect()
                schema = frozenset(self.db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
                if schema == SCHEMA_ROWS and self.get("format") == FORMAT:
                    self._accept()
                    return False
                self.salvaged_highest = int(self.get("highest") or 0)
            except (sqlite3.DatabaseError, ValueError):
                pass
            self.close()
            _remove_database(self.path)
        self.db = self._connect()
        with self.transaction():
            for statement in SCHEMA:
                self.db.execute(statement)
            self.set("format", FORMAT)
        if not all(map(_own_file, paths)):  # planted while SQLite was opening them
            self.close()
            raise NoteError(f"something replaced the index's files in {self.dir} while they were "
                            "being opened; nothing was written through it")
        return True

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=60)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA journal_size_limit=8388608")  # the WAL file shrinks back to 8 MB
        db.execute("PRAGMA cache_size=-16000")  # 16 MB of pages kept in memory (default: 2 MB)
        return db

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    @contextmanager
    def transaction(self):
        """A write transaction, which leaves a fresh stamp: the mark of a NoteTool's commit."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.set("stamp", os.urandom(8).hex())
        except BaseException:
            self.db.execute("ROLLBACK")
            self.own_changes = self.db.total_changes  # counted, though undone
            raise
        self.db.execute("COMMIT")
        self._accept()

    def _accept(self) -> None:
        """Take the database as it is now as known good."""
        self.version = self.db.execute("PRAGMA data_version").fetchone()[0]
        self.stamp = self.get("stamp")
        self.own_changes = self.db.total_changes

    def changed_behind(self) -> bool:
        """Whether someone committed to the database without leaving a stamp since this tool
        last looked (SQLite's data_version moves with every other connection's commit; another
        NoteTool's commit also leaves a new stamp), or wrote through this tool's own connection
        outside its transactions (which data_version does not count: issue 46, item 17)."""
        if self.db.total_changes != self.own_changes:
            self._accept()
            return True
        if self.db.execute("PRAGMA data_version").fetchone()[0] == self.version:
            return False
        stamp = self.stamp
        self._accept()
        return self.stamp == stamp

    # ----------------------------------------------------------------- meta

    def get(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set(self, key: str, value) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, str(value)))

    def highest(self) -> int:
        return int(self.get("highest") or 0)

    def raise_highest(self, number: int) -> None:
        if number > self.highest():
            self.set("highest", number)

    # ----------------------------------------------------------------- rows

    def file_keys(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT id, file_key FROM notes"))

    def row(self, note_id: str) -> Row | None:
        found = self.db.execute(f"SELECT {COLUMNS} FROM notes WHERE id = ?", (note_id,)).fetchone()
        return Row(*found) if found else None

    def _rows(self, sql: str, params: Sequence = ()) -> list[Row]:
        return [Row(*r) for r in self.db.execute(sql, params)]

    def remove(self, note_id: str) -> None:
        old = self.row(note_id)
        if old is None:
            return
        if old.problem is None:
            terms = note_terms(old.title, json.loads(old.tags), old.content)
            self.db.executemany(
                "DELETE FROM postings WHERE term = ? AND updated_us = ? AND number = ? AND rid = ?",
                [(t, old.updated_us, old.number, old.rid) for t in terms])
            self.db.execute("DELETE FROM tags WHERE rid = ?", (old.rid,))
        self.db.execute("DELETE FROM notes WHERE rid = ?", (old.rid,))

    def put(self, note: Note, key: str) -> None:
        """Index one note as read from a file with key `key` (replacing any earlier row)."""
        self.remove(note.id)
        self._insert(note, key, postings=None)

    def put_problem(self, note_id: str, key: str, problem: str) -> None:
        """Record a note file that cannot be read: its id stays taken, it is listed as damaged."""
        self.remove(note_id)
        self.db.execute("INSERT INTO notes (id, number, file_key, problem) VALUES (?, ?, ?, ?)",
                        (note_id, id_number(note_id), key, problem))

    def _insert(self, note: Note, key: str, postings: list | None) -> None:
        number, updated = id_number(note.id), micros(note.updated_at)
        meta = note.front_matter()
        rid = self.db.execute(
            "INSERT INTO notes (id, number, file_key, title, type, tags, created_at, updated_at, "
            "content, updated_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (note.id, number, key, note.title, note.type, json.dumps(list(note.tags), ensure_ascii=False),
             meta["created_at"], meta["updated_at"], note.content, updated)).lastrowid
        self.db.executemany("INSERT INTO tags (tag, rid) VALUES (?, ?)", [(t, rid) for t in note.tags])
        rows = [(t, updated, number, rid) for t in note.terms]
        if postings is None:
            self.db.executemany("INSERT INTO postings VALUES (?, ?, ?, ?)", rows)
        else:
            postings.extend(rows)

    def replace_all(self, items: Iterable[tuple[str, str, Note | None, str | None]]) -> None:
        """Rebuild: forget every row, then index (id, key, note or None, problem or None) for
        each file."""
        for table in ("postings", "tags", "notes"):
            self.db.execute(f"DELETE FROM {table}")
        postings: list = []
        for note_id, key, note, problem in items:
            if note is None:
                self.put_problem(note_id, key, problem)
            else:
                self._insert(note, key, postings)
        # SQLite sorts faster than Python; a B-tree filled in key order is filled fastest.
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS staging (term, updated_us, number, rid)")
        self.db.executemany("INSERT INTO temp.staging VALUES (?, ?, ?, ?)", postings)
        self.db.execute("INSERT INTO postings SELECT * FROM temp.staging "
                        "ORDER BY term, updated_us, number, rid")
        self.db.execute("DELETE FROM temp.staging")

    # ----------------------------------------------------------------- questions

    def problems(self) -> list[tuple[str, str]]:
        found = list(self.db.execute(
            "SELECT id, problem FROM notes WHERE problem IS NOT NULL ORDER BY number, id"))
        if not all(isinstance(i, str) and isinstance(p, str) for i, p in found):
            raise IndexDamaged("a damaged note's row in the index is malformed")
        return found

    def max_number(self) -> int:
        return self.db.execute("SELECT COALESCE(MAX(number), 0) FROM notes").fetchone()[0]

    @staticmethod
    def _filters(note_type: str | None, tags: Sequence[str], on_notes: bool) -> tuple[str, list]:
        """SQL conditions for a type and tags, on the notes table or on a table with a rid."""
        sql, params = "", []
        if note_type is not None:
            sql += (" AND type = ?" if on_notes else
                    " AND rid IN (SELECT rid FROM notes WHERE type = ? AND problem IS NULL)")
            params.append(note_type)
        for tag in tags:
            sql += " AND rid IN (SELECT rid FROM tags WHERE tag = ?)"
            params.append(tag)
        return sql, params

    def newest(self, note_type: str | None = None, tags: Sequence[str] = (),
               limit: int | None = None) -> list[Row]:
        """Readable notes with that type and all those tags, most recently updated first."""
        return self._newest(COLUMNS, note_type, tags, limit)

    def _newest(self, columns: str, note_type: str | None, tags: Sequence[str],
                limit: int | None) -> list[Row]:
        where, params = self._filters(note_type, tags, on_notes=True)
        sql = (f"SELECT {columns} FROM notes WHERE problem IS NULL{where} "
               "ORDER BY updated_us DESC, number DESC, rid DESC")
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return self._rows(sql, params)

    def search(self, wanted: frozenset, limit: int, note_type: str | None = None,
               tags: Sequence[str] = ()) -> list[Row]:
        """The best `limit` readable notes for the query terms `wanted`, ranked like
        `search_notes`, reading the newest postings first (see the module docstring)."""
        if not wanted or limit == 0:
            return []
        terms = sorted(wanted)
        if len(terms) > MAX_BOUND_TERMS:
            self.db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (term TEXT PRIMARY KEY)")
            self.db.execute("DELETE FROM temp.wanted")
            self.db.executemany("INSERT INTO temp.wanted VALUES (?)", [(t,) for t in terms])
            self.own_changes = self.db.total_changes  # a scratch table: not a change to the index
            term_sql, term_params, values = "term IN (SELECT term FROM temp.wanted)", [], ""
        else:
            term_sql = f"term IN ({','.join('?' * len(terms))})"
            term_params = terms
            values = "WITH wanted(term) AS (VALUES " + ",".join("(?)" for _ in terms) + ") "
        where, filter_params = self._filters(note_type, tags, on_notes=False)
        found: dict[int, tuple[int, int, int]] = {}  # rid -> (hits, updated_us, number)
        newer_than = None  # the processed region: notes at or after this key
        window = FIRST_WINDOW
        while True:
            lower = self.db.execute(
                "SELECT updated_us, number, rid FROM notes WHERE problem IS NULL "
                "ORDER BY updated_us DESC, number DESC, rid DESC LIMIT 1 OFFSET ?",
                (window - 1,)).fetchone()
            region, params = "", []
            if lower is not None:
                region += " AND (updated_us, number, rid) >= (?, ?, ?)"
                params += lower
            if newer_than is not None:
                region += " AND (updated_us, number, rid) < (?, ?, ?)"
                params += newer_than
            for rid, updated, number, hits in self.db.execute(
                    f"SELECT rid, updated_us, number, COUNT(*) FROM postings WHERE {term_sql}"
                    f"{region}{where} GROUP BY rid", [*term_params, *params, *filter_params]):
                found[rid] = (hits, updated, number)
            best = sorted(found.items(), key=lambda kv: (-kv[1][0], -kv[1][1], -kv[1][2], -kv[0]))
            best = best[:limit]
            if lower is None:
                break  # every note has been looked at
            # How many of the query's terms occur at all in notes older than the region:
            # no older note can have more hits than that.
            bound = self.db.execute(
                f"{values}SELECT COUNT(*) FROM wanted WHERE EXISTS (SELECT 1 FROM postings p WHERE "
                "p.term = wanted.term AND (p.updated_us, p.number, p.rid) < (?, ?, ?))",
                [*([] if len(terms) > MAX_BOUND_TERMS else terms), *lower]).fetchone()[0]
            if bound == 0 or (len(best) == limit and best[-1][1][0] >= bound):
                break
            newer_than, window = lower, window * 4
        if not best:
            return []
        order = {rid: i for i, (rid, _) in enumerate(best)}
        rows = self._rows(f"SELECT {COLUMNS} FROM notes WHERE rid IN ({','.join('?' * len(order))})",
                          list(order))
        if sorted((r.rid, r.updated_us, r.number) for r in rows if r.problem is None) != sorted(
                (rid, key[1], key[2]) for rid, key in best):
            raise IndexDamaged("the search postings name notes the index does not hold")
        return sorted(rows, key=lambda r: order[r.rid])

    def counts(self, kind: str) -> list[tuple[str, int]]:
        """(type or tag, number of notes), most notes first, read from the counts the triggers
        keep (so the cost is the number of types or tags, not of notes)."""
        return list(self.db.execute("SELECT key, n FROM counts WHERE kind = ? AND n > 0 "
                                    "ORDER BY n DESC, key", (kind,)))

    def briefs(self, note_type: str | None = None, limit: int | None = None) -> list[Row]:
        """Like `newest`, without the content (for summaries)."""
        columns = "rid, id, number, file_key, problem, title, type, NULL, NULL, updated_at, NULL, updated_us"
        return self._newest(columns, note_type, (), limit)
