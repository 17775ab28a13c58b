"""NoteTool under index damage (issue 25, item 9): properties, not examples.

The notes on disk are the truth. Whatever happens to the index (deleted, truncated, a row
corrupted, an old copy written back, links planted in `.index/`, `.highest-id` replaced by a
folder or a link, another tool writing), every call through `run()` returns a result, never an
exception; `list` and `search` agree with the note files; nothing outside the notes folder is
written; and a crash between writing a note and indexing it leaves exactly one note.
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from solutions.notes import (ACTIONS, HIGHEST_ID_FILE, INDEX_DIR, NOTE_TYPES, NoteFormatError,
                             NoteTool, parse_note, search_notes)
from solutions.notes.index import DATABASE, DATABASE_FILES, NoteIndex
from tests.solutions.test_notes_index import Clock, search_sorted

WORDS = ["zlib", "cmake", "inflate", "toolchain", "链接", "主机", "交叉编译", "找不到"]
words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
tag_lists = st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True)
ROW_DAMAGE = [
    "UPDATE notes SET tags = 'garbage' WHERE rid = (SELECT MIN(rid) FROM notes)",
    "UPDATE notes SET title = NULL WHERE rid = (SELECT MAX(rid) FROM notes)",
    "UPDATE notes SET type = 'bogus' WHERE rid = (SELECT MIN(rid) FROM notes)",
    "UPDATE notes SET updated_us = updated_us + 1 WHERE rid = (SELECT MIN(rid) FROM notes)",
    "DELETE FROM notes WHERE rid = (SELECT MAX(rid) FROM notes)",
    "DELETE FROM postings",
    "INSERT INTO postings VALUES ('zlib', 1, 1, 999999)",
    "UPDATE counts SET n = n + 5",
    "DELETE FROM tags",
    "UPDATE meta SET value = '1' WHERE key = 'highest'",
    "DROP TABLE counts",
]


def notes_on_disk(folder: Path) -> dict:
    """The readable notes in the folder, by id: the truth the tool must agree with."""
    found = {}
    for path in sorted(folder.glob("note-*.md")):
        try:
            found[path.stem] = parse_note(path.read_text(encoding="utf-8"))
        except NoteFormatError:
            pass
    return found


def tree(root: Path) -> dict:
    """Every path under `root` (not following links) with what is there."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                state[str(path)] = ("link", os.readlink(path))
            elif path.is_file():
                state[str(path)] = ("file", path.read_bytes())
            else:
                state[str(path)] = ("folder",)
    return state


def never_waiting(met: list[str]):
    """sqlite3.connect for the index that gives up at once on a lock and records each one it
    met. Every NoteTool call holds the folder lock, so the index never needs to wait: a lock
    met means a damaged file was opened instead of replaced (SQLite would wait 60 s)."""
    class Recording(sqlite3.Connection):
        def execute(self, *args):
            try:
                return super().execute(*args)
            except sqlite3.OperationalError as exc:
                met.append(str(exc))
                raise

    real = sqlite3.connect
    return lambda *a, **k: real(*a, **{**k, "timeout": 0, "factory": Recording})


class IndexUnderDamage(RuleBasedStateMachine):
    """The seven actions through run(), interleaved with damage to the index and its files."""

    def __init__(self):
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        self.folder = root / "notes"
        self.outside = root / "outside"  # where planted links point: must never change
        self.outside.mkdir()
        (self.outside / "existing.sqlite3").write_bytes(b"someone else's file\n")
        (self.outside / "folder").mkdir()
        self.outside_before = tree(self.outside)
        self.locks_met: list[str] = []
        self.no_waiting = mock.patch("solutions.notes.index.sqlite3.connect",
                                     never_waiting(self.locks_met))
        self.no_waiting.start()
        self.clock = Clock()
        self.tool = NoteTool(self.folder, clock=self.clock)
        self.others: list[NoteTool] = []
        self.expected: dict[str, tuple] = {}  # id -> (title, content, type, tags): what was written
        self.old_copy: Path | None = None

    def teardown(self):
        for tool in [self.tool, *self.others]:
            tool.index.close()
        self.no_waiting.stop()
        self.tmp.cleanup()

    def run(self, **arguments) -> dict:
        result = self.tool.run(arguments)  # raising here fails the test: run() never raises
        assert isinstance(result, dict) and isinstance(result.get("ok"), bool)
        json.dumps(result)
        assert result["ok"], result["error"]  # every damage below is healed, not just reported
        return result

    @property
    def db(self) -> Path:
        return self.folder / INDEX_DIR / DATABASE

    def ids(self) -> list[str]:
        return sorted(self.expected)

    # ----------------------------------------------------------------- actions

    @rule(title=words, content=words, kind=st.sampled_from(NOTE_TYPES), tags=tag_lists)
    def create(self, title, content, kind, tags):
        note = self.run(action="create", title=title, content=content, type=kind, tags=tags)["note"]
        assert note["id"] not in self.expected and note["id"] not in self.deleted()
        self.expected[note["id"]] = (title, content, kind, tuple(tags))

    @precondition(lambda self: self.expected)
    @rule(data=st.data(), content=words, kind=st.sampled_from(NOTE_TYPES))
    def update(self, data, content, kind):
        note_id = data.draw(st.sampled_from(self.ids()))
        self.run(action="update", note_id=note_id, content=content, type=kind)
        title, _, _, tags = self.expected[note_id]
        self.expected[note_id] = (title, content, kind, tags)

    @precondition(lambda self: self.expected)
    @rule(data=st.data())
    def delete(self, data):
        note_id = data.draw(st.sampled_from(self.ids()))
        self.run(action="delete", note_id=note_id)
        del self.expected[note_id]

    @rule(tag=st.none() | st.sampled_from(["a", "b"]), kind=st.none() | st.sampled_from(NOTE_TYPES))
    def list(self, tag=None, kind=None):
        arguments = {k: v for k, v in (("tags", tag and [tag]), ("type", kind)) if v is not None}
        listed = [n["id"] for n in self.run(action="list", **arguments)["notes"]]
        truth = [n for n in notes_on_disk(self.folder).values()
                 if (kind is None or n.type == kind) and (tag is None or tag in n.tags)]
        assert listed == [n.id for n in search_sorted(truth)]

    @rule(query=words, limit=st.integers(0, 30))
    def search(self, query="zlib", limit=50):
        found = [n["id"] for n in self.run(action="search", query=query, limit=limit)["notes"]]
        assert found == [n.id for n in search_notes(notes_on_disk(self.folder).values(), query, limit)]

    @rule(title=words)
    def another_tool_creates(self, title):
        """A second NoteTool on the folder writes: legitimate, and the first must see it."""
        if not self.others:
            self.others.append(NoteTool(self.folder, clock=self.clock))
        note = self.others[0].create(title, "zlib", "general")
        assert note.id not in self.expected
        self.expected[note.id] = (title, "zlib", "general", ())

    @rule()
    def reopen(self):
        self.tool.index.close()
        self.tool = NoteTool(self.folder, clock=self.clock)

    # ----------------------------------------------------------------- damage

    @rule(only_the_main_file=st.booleans())
    def delete_the_database(self, only_the_main_file=False):
        for suffix in DATABASE_FILES[:1] if only_the_main_file else DATABASE_FILES:
            if os.path.lexists(f"{self.db}{suffix}"):
                os.unlink(f"{self.db}{suffix}")

    @rule(keep=st.sampled_from([0, 100, 4096]))
    def truncate_the_database(self, keep):
        if self.db.is_file() and not self.db.is_symlink():
            os.truncate(self.db, min(keep, self.db.stat().st_size))

    @rule(damage=st.sampled_from(ROW_DAMAGE))
    def corrupt_rows(self, damage):
        """Another program writes to the index behind the open tool."""
        if not self.db.is_file() or self.db.is_symlink():
            return
        db = sqlite3.connect(self.db, timeout=0)
        try:
            db.execute(damage)
            db.commit()
        except sqlite3.Error:
            pass  # the damage itself could not be done (e.g. the table is already gone)
        finally:
            db.close()

    @rule()
    def keep_an_old_copy(self):
        if self.db.is_file() and not self.db.is_symlink():
            self.old_copy = Path(self.tmp.name) / "old-copy.sqlite3"
            source = sqlite3.connect(self.db, timeout=0)  # the test's own access never waits
            target = sqlite3.connect(self.old_copy)
            try:
                source.backup(target)  # a consistent copy, even with the WAL in use
            except sqlite3.Error:
                self.old_copy.unlink(missing_ok=True)
                self.old_copy = None  # the index is damaged right now: nothing to copy
            finally:
                source.close()
                target.close()

    @precondition(lambda self: self.old_copy is not None)
    @rule(in_place=st.booleans())
    def write_the_old_copy_back(self, in_place):
        """The index goes stale behind the open tool: an older copy replaces it (a new file,
        or written into the one the tool has open)."""
        if not in_place or not self.db.is_file() or self.db.is_symlink():
            self.delete_the_database()
        shutil.copyfile(self.old_copy, self.db)

    @rule(suffix=st.sampled_from(DATABASE_FILES), pointee=st.sampled_from(
        ["existing.sqlite3", "missing.sqlite3", "folder"]))
    def plant_a_link_in_the_index(self, suffix, pointee):
        path = Path(f"{self.db}{suffix}")
        if os.path.lexists(path):
            os.unlink(path)
        path.parent.mkdir(exist_ok=True)
        os.symlink(self.outside / pointee, path)

    @rule()
    def make_the_index_folder_a_link(self):
        shutil.rmtree(self.folder / INDEX_DIR, ignore_errors=True)
        if os.path.lexists(self.folder / INDEX_DIR):
            os.unlink(self.folder / INDEX_DIR)
        os.symlink(self.outside / "folder", self.folder / INDEX_DIR)

    @rule(kind=st.sampled_from(["folder", "link to a file", "dangling link", "garbage"]))
    def replace_the_highest_id(self, kind):
        path = self.folder / HIGHEST_ID_FILE
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        elif os.path.lexists(path):
            path.unlink()
        if kind == "folder":
            path.mkdir()
        elif kind == "link to a file":
            os.symlink(self.outside / "existing.sqlite3", path)
        elif kind == "dangling link":
            os.symlink(self.outside / "missing-id", path)
        else:
            path.write_bytes(b"\xff\x00 not a number")

    # ----------------------------------------------------------------- invariants

    def deleted(self) -> set[str]:
        tombs = self.folder / ".deleted"
        return set(os.listdir(tombs)) if tombs.is_dir() else set()

    @invariant()
    def the_files_hold_what_was_written_once(self):
        on_disk = notes_on_disk(self.folder)
        assert {i: (n.title, n.content, n.type, n.tags) for i, n in on_disk.items()} == self.expected
        assert not set(on_disk) & self.deleted()  # a deleted id is never given out again

    @invariant()
    def list_and_search_agree_with_the_files(self):
        self.list()
        self.search()

    @invariant()
    def no_lock_is_ever_waited_for(self):
        assert self.locks_met == []

    @invariant()
    def nothing_outside_the_folder_is_written(self):
        assert tree(self.outside) == self.outside_before
        assert sorted(p.name for p in Path(self.tmp.name).iterdir()) == sorted(
            ["notes", "outside", *(["old-copy.sqlite3"] if self.old_copy else [])])


IndexUnderDamage.TestCase.settings = settings(
    max_examples=30, stateful_step_count=15, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_the_index_under_damage = IndexUnderDamage.TestCase


# --------------------------------------------------------------------------- regressions


def test_a_second_tool_never_waits_on_a_truncated_index_the_first_holds_open(tmp_path, monkeypatch):
    """Before: the second tool waited 60 s for SQLite's lock (the open tool holds a shared lock
    on its WAL database, and a zero-length file looks like a new database to make) before
    giving up and rebuilding."""
    first = NoteTool(tmp_path / "notes", clock=Clock())
    first.create("zlib a", "zlib")
    first.create("zlib b", "zlib")
    os.truncate(first.folder / INDEX_DIR / DATABASE, 0)
    met: list[str] = []
    monkeypatch.setattr("solutions.notes.index.sqlite3.connect", never_waiting(met))
    second = NoteTool(first.folder, clock=first.clock)
    assert [n.id for n in second.list()] == ["note-0002", "note-0001"]
    assert second.create("zlib c").id == "note-0003"
    assert [n.id for n in first.list()] == ["note-0003", "note-0002", "note-0001"]
    assert met == []


@pytest.mark.parametrize("crash", [sqlite3.DatabaseError("database disk image is malformed"),
                                   OSError("killed between the note file and the index")])
def test_a_crash_between_writing_a_note_and_indexing_it_leaves_exactly_one_note(tmp_path, monkeypatch,
                                                                               crash):
    tool = NoteTool(tmp_path / "notes", clock=Clock())
    real, calls = NoteIndex.put, []

    def put_once_failing(self, *args):
        calls.append(args)
        if len(calls) == 1:
            raise crash
        return real(self, *args)

    monkeypatch.setattr(NoteIndex, "put", put_once_failing)
    result = tool.run({"action": "create", "title": "zlib missing", "content": "zlib"})
    assert result["ok"] is isinstance(crash, sqlite3.DatabaseError)  # damage heals; a crash reports
    monkeypatch.undo()
    for healed in (tool, NoteTool(tool.folder)):
        assert [n.id for n in healed.list()] == ["note-0001"]
    assert sorted(p.name for p in tool.folder.glob("note-*.md")) == ["note-0001.md"]
    assert tool.create("next").id == "note-0002"


anything = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6)
argument_dicts = st.dictionaries(
    st.sampled_from(["action", "note_id", "title", "content", "type", "tags", "query", "limit"])
    | st.text(max_size=8), anything | st.sampled_from([*ACTIONS, "note-0001", "blocker"]), max_size=6)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arguments=argument_dicts)
def test_run_always_answers_with_a_result(tmp_path, arguments):
    tool = NoteTool(tmp_path / "run-notes", clock=Clock())
    if not tool.list():
        tool.create("zlib", "zlib")
    result = tool.run(arguments)  # never raises
    assert isinstance(result, dict) and isinstance(result["ok"], bool)
    json.dumps(result)
    if not result["ok"]:
        assert isinstance(result["error"], str) and result["error"]
