"""NoteTool trusts nothing it finds (issue 25, item 9; item 6 for run): every regression here
failed before the fix (a link followed, a raw OSError, 1 of 19 notes listed, list() raising)."""
import os
import sqlite3

import pytest

from solutions.notes import INDEX_DIR, NoteTool

DB = "notes.sqlite3"


def made(tmp_path, n=3):
    tool = NoteTool(tmp_path / "notes")
    for i in range(n):
        tool.create(f"n{i}", "zlib")
    return tool


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm"])
def test_a_link_planted_in_the_index_is_never_followed(tmp_path, suffix):
    tool = made(tmp_path)
    tool.index.close()
    for s in ("", "-wal", "-shm"):
        path = tool.folder / INDEX_DIR / (DB + s)
        if os.path.lexists(path):
            os.unlink(path)
    outside = tmp_path / "outside"
    os.symlink(outside, tool.folder / INDEX_DIR / (DB + suffix))
    fresh = NoteTool(tool.folder)
    fresh.create("more")
    assert not outside.exists() and len(fresh.list()) == 4


@pytest.mark.parametrize("kind", ["link", "folder", "garbage"])
def test_a_highest_id_that_is_not_our_file_never_breaks_create(tmp_path, kind):
    tool = made(tmp_path)
    path = tool.folder / ".highest-id"
    path.unlink()
    if kind == "link":
        os.symlink(tmp_path / "elsewhere", path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_bytes(b"\xff garbage")
    result = tool.run({"action": "create", "title": "next"})
    assert result["ok"] and result["note"]["id"] == "note-0004"
    assert not (tmp_path / "elsewhere").exists() and path.read_text() == "4\n"


def test_an_index_changed_behind_an_open_tool_is_healed_by_it(tmp_path):
    tool = made(tmp_path, 19)
    with sqlite3.connect(tool.folder / INDEX_DIR / DB) as db:
        db.execute("DELETE FROM notes WHERE id != 'note-0001'")
    assert len(tool.list()) == 19 and len(tool.search("zlib", limit=50)) == 19


@pytest.mark.parametrize("damage", ["UPDATE notes SET tags = 'garbage' WHERE id = 'note-0002'",
                                    "UPDATE notes SET title = NULL WHERE id = 'note-0002'",
                                    "UPDATE notes SET type = 'bogus' WHERE id = 'note-0002'",
                                    "DELETE FROM notes WHERE id = 'note-0003'"])
def test_a_malformed_row_never_breaks_a_new_tool(tmp_path, damage):
    tool = made(tmp_path)
    tool.index.close()
    with sqlite3.connect(tool.folder / INDEX_DIR / DB) as db:
        db.execute(damage)
    fresh = NoteTool(tool.folder)
    assert len(fresh.list()) == 3 and len(fresh.search("zlib")) == 3
    assert fresh.summary()["total"] == 3


@pytest.mark.parametrize("arguments", [{"action": "list", "limit": 2**63},
                                       {"action": "search", "query": "x", "limit": 2**63},
                                       {"action": "list", "limit": True},
                                       {"action": "list", "limit": -1}, None, 5])
def test_run_answers_bad_input_with_an_error_result(tmp_path, arguments):
    result = made(tmp_path, 1).run(arguments)
    assert result["ok"] is False and result["error"]


EMPTY_THE_INDEX = ["DELETE FROM postings", "DELETE FROM tags", "DELETE FROM notes",
                   "UPDATE meta SET value = '1' WHERE key = 'highest'"]


def test_an_emptied_index_is_noticed_by_a_new_tool(tmp_path):
    """Issue 46, item 17: 19 notes on disk, the index's tables emptied and its highest id set
    back while no tool was open: a new tool lists, searches and counts the 19 (the notes are
    the truth) and never reuses an id."""
    tool = made(tmp_path, 19)
    tool.index.close()
    with sqlite3.connect(tool.folder / INDEX_DIR / DB) as db:
        for statement in EMPTY_THE_INDEX:
            db.execute(statement)
    fresh = NoteTool(tool.folder)
    assert len(fresh.list()) == 19 and len(fresh.search("zlib", limit=50)) == 19
    assert fresh.summary()["total"] == 19
    assert fresh.create("one more").id == "note-0020"


def test_an_index_emptied_through_the_tools_own_connection_is_noticed(tmp_path):
    """The same damage written through the open tool's own connection (`tool.index.db`):
    SQLite's data_version does not move for a connection's own commits, so before the fix the
    open tool listed 1 of 19 notes (the one a pending folder event re-read). Any write that
    was not one of the tool's own transactions now counts as damage: the index is rebuilt."""
    tool = made(tmp_path, 19)
    for statement in EMPTY_THE_INDEX:
        tool.index.db.execute(statement)
    assert len(tool.list()) == 19 and len(tool.search("zlib", limit=50)) == 19
    assert tool.summary()["total"] == 19
    assert tool.create("one more").id == "note-0020"


def test_a_long_querys_scratch_table_is_not_taken_for_damage(tmp_path, monkeypatch):
    """A query of more than MAX_BOUND_TERMS terms writes its terms to a temporary table through
    the tool's connection: that is not a change to the index, and must not cost a rebuild."""
    from solutions.notes.index import MAX_BOUND_TERMS
    from solutions.notes.sync import IndexedFolder

    tool = made(tmp_path, 3)
    rebuilds = []
    real = IndexedFolder.rebuild
    monkeypatch.setattr(IndexedFolder, "rebuild", lambda self: rebuilds.append(1) or real(self))
    query = " ".join(["zlib"] + [f"term{i}" for i in range(MAX_BOUND_TERMS + 10)])
    assert len(tool.search(query, limit=5)) == 3
    assert len(tool.list()) == 3 and rebuilds == []
