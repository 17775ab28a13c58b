"""Issue 35 item 4: NoteTool's update, delete and summary touch one note's rows and the kept
counts, so their work in SQLite does not grow with the folder. Checked by SQLite's own work,
never by the clock (benchmarks/bench_notes.py --growth prints the times, before and after):

- the number of virtual-machine steps SQLite runs for each action (a progress handler called on
  every step), in a folder of 40 notes and one of 400 whose first notes are the same: a scan of
  the tags table (the old `DELETE FROM tags WHERE rid = ?`, the tags' key being (tag, rid)) or a
  count over every note (the old summary) makes it grow about ten times;
- the query plan of every statement those actions run: no full scan of a table (`SCAN t`
  without an index);
- an index made by the old schema (format notes-index-1) still opens: it is rebuilt from the
  note files, like any index that is not this format.
"""
import shutil
import sqlite3
from pathlib import Path

import pytest

from lesson_support.notes_scenario import write_synthetic_notes
from solutions.notes import INDEX_DIR, NoteTool
from solutions.notes.index import DATABASE, FORMAT

SMALL, LARGE = 40, 400
ACTIONS = {
    # New content and new tags: every row of the note is replaced (its postings, its tags).
    "update": lambda tool: tool.update("note-0003", content="更新：zlib 已交叉编译 updated",
                                       tags=["zlib", "updated"]),
    "delete": lambda tool: tool.delete("note-0004"),
    "summary": lambda tool: tool.summary(),
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Two folders of synthetic notes (the same seed: notes 1..40 are the same in both)."""
    made = {}
    for n in (SMALL, LARGE):
        folder = tmp_path_factory.mktemp(f"notes-{n}") / "notes"
        write_synthetic_notes(folder, n)
        made[n] = folder
    return made


def fresh_tool(source: Path, tmp_path: Path) -> NoteTool:
    folder = tmp_path / source.parent.name
    shutil.copytree(source, folder)
    tool = NoteTool(folder)
    tool.summary()  # settle whatever opening leaves to do
    return tool


def traced(tool: NoteTool, action) -> tuple[int, list[str]]:
    """The virtual-machine steps SQLite runs for `action(tool)`, and the statements it runs."""
    db = tool.index.db
    steps, statements = [0], []

    def step():
        steps[0] += 1
        return 0  # go on

    db.set_progress_handler(step, 1)
    db.set_trace_callback(statements.append)
    try:
        action(tool)
    finally:
        db.set_progress_handler(None, 1)
        db.set_trace_callback(None)
    assert tool.index.db is db, "the action reopened the index: its steps were not all counted"
    return steps[0], statements


@pytest.mark.parametrize("action", list(ACTIONS))
def test_update_delete_and_summary_do_the_same_work_in_a_folder_ten_times_larger(
        folders, tmp_path, action):
    steps = {}
    for n, source in folders.items():
        tool = fresh_tool(source, tmp_path / str(n))
        if action == "summary" and not tool._store.watch.active:
            pytest.skip("without inotify, summary checks every note file first (by design)")
        steps[n], _ = traced(tool, ACTIONS[action])
        tool.index.close()
    # Ten times the notes: a scan or a count over them would take about ten times the steps.
    assert steps[LARGE] <= 1.3 * steps[SMALL] + 50, (
        f"{action}: {steps[SMALL]:,} SQLite steps with {SMALL} notes, {steps[LARGE]:,} with "
        f"{LARGE}: its work grows with the folder")


def full_scans(db: sqlite3.Connection, statement: str) -> list[str]:
    """The lines of the statement's query plan that read a whole table without an index."""
    plan = db.execute(f"EXPLAIN QUERY PLAN {statement}").fetchall()
    return [row[-1] for row in plan
            if row[-1].startswith("SCAN ") and " USING " not in row[-1]
            and not row[-1].startswith("SCAN CONSTANT ROW")]


@pytest.mark.parametrize("action", list(ACTIONS))
def test_no_statement_of_update_delete_or_summary_scans_a_whole_table(folders, tmp_path, action):
    tool = fresh_tool(folders[SMALL], tmp_path)
    _, statements = traced(tool, ACTIONS[action])
    tool.index.close()
    checked = [s for s in statements
               if s.lstrip().split()[0].upper() in ("SELECT", "DELETE", "UPDATE", "INSERT")]
    assert any(s.startswith("DELETE FROM tags") for s in checked) or action == "summary"
    db = sqlite3.connect(tool.folder / INDEX_DIR / DATABASE)
    try:
        scans = {s: found for s in checked if (found := full_scans(db, s))}
    finally:
        db.close()
    assert scans == {}, f"{action} reads whole tables: {scans}"


def test_removing_a_notes_tags_uses_the_index_on_their_note(tmp_path):
    tool = NoteTool(tmp_path / "notes")
    tool.create("zlib", "x", tags=["zlib"])
    plan = " ".join(row[-1] for row in tool.index.db.execute(
        "EXPLAIN QUERY PLAN DELETE FROM tags WHERE rid = ?", (1,)))
    assert "USING COVERING INDEX tags_of_note" in plan, plan


OLD_SCHEMA = (  # the index's schema before issue 35 (format notes-index-1): no tags_of_note,
    # no counts and no triggers
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    """CREATE TABLE notes (rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, number INTEGER NOT NULL,
    file_key TEXT NOT NULL, problem TEXT, title TEXT, type TEXT, tags TEXT, created_at TEXT,
    updated_at TEXT, content TEXT, updated_us INTEGER)""",
    "CREATE TABLE tags (tag TEXT NOT NULL, rid INTEGER NOT NULL, PRIMARY KEY (tag, rid)) WITHOUT ROWID",
    """CREATE TABLE postings (term TEXT NOT NULL, updated_us INTEGER NOT NULL, number INTEGER NOT NULL,
    rid INTEGER NOT NULL, PRIMARY KEY (term, updated_us, number, rid)) WITHOUT ROWID""",
)


def test_an_index_made_by_the_old_schema_still_opens_and_is_rebuilt(folders, tmp_path):
    folder = tmp_path / "notes"
    shutil.copytree(folders[SMALL], folder)
    (folder / INDEX_DIR).mkdir()
    db = sqlite3.connect(folder / INDEX_DIR / DATABASE)
    db.execute("PRAGMA journal_mode=WAL")
    for statement in OLD_SCHEMA:
        db.execute(statement)
    db.execute("INSERT INTO meta VALUES ('format', 'notes-index-1'), ('highest', '41')")
    db.commit()
    db.close()
    tool = NoteTool(folder)
    assert tool.index.get("format") == FORMAT
    assert tool.summary()["total"] == SMALL
    assert tool.create("one more", "zlib").id == "note-0042"  # the old index's highest id is kept
    assert [n.id for n in tool.search("zlib", limit=1)] == ["note-0042"]
