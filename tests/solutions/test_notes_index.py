"""NoteTool's index never lies (issue 14, findings 1-5).

1. ids are never reused, whatever happens to the files (hand removal, a lost or rebuilt index);
2. the index is checked against the files' metadata, not only their names, and heals itself:
   a note changed by hand, or by a crash between the note's write and the index's, is seen by
   list, summary and as_source;
3. a damaged note file is reported as damaged and every other note still lists and searches;
4. the leftovers of a killed writer are removed the next time the folder is opened;
5. the cost of create and search does not grow with the folder (checked by what is read and
   written, never by the clock: benchmarks/bench_notes.py prints the times).

Plus property tests: the index answers exactly what the files say (search like `search_notes`,
list like filtering the files), through any sequence of actions and damage done by hand.
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from solutions.notes import (INDEX_DIR, NOTE_TYPES, Note, NoteFormatError,
                             NoteNotFound, NoteTool, parse_note, render_note, search_notes)
from solutions.notes import files as note_files
from solutions.notes.index import NoteIndex
from course.paths import REPO_ROOT

CN = timezone(timedelta(hours=8))
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=CN)


class Clock:
    def __init__(self, start=T0):
        self.now = start

    def __call__(self):
        self.now += timedelta(minutes=1)
        return self.now


@pytest.fixture
def tool(tmp_path):
    return NoteTool(tmp_path / "notes", clock=Clock())


def edit_in_place(path: Path, old: str, new: str) -> None:
    """Change a file the way an editor that writes in place does (the folder does not change)."""
    text = path.read_text(encoding="utf-8")
    assert old in text
    with open(path, "r+", encoding="utf-8") as f:
        f.write(text.replace(old, new))
        f.truncate()


def lose_index(folder: Path) -> None:
    shutil.rmtree(folder / INDEX_DIR, ignore_errors=True)


# --------------------------------------------------------------------------- 1. ids


def test_an_id_is_not_reused_after_its_file_is_removed_by_hand(tmp_path):
    d = tmp_path / "notes"
    t = NoteTool(d)
    assert [t.create(f"n{i}").id for i in range(3)] == ["note-0001", "note-0002", "note-0003"]
    os.unlink(d / "note-0003.md")
    assert NoteTool(d).create("new").id == "note-0004"   # the reproduction
    os.unlink(d / "note-0004.md")
    assert t.create("same tool").id == "note-0005"        # the tool that was already open
    os.unlink(d / "note-0005.md")
    assert t.rebuild_index() == [] and t.create("after a rebuild").id == "note-0006"


def test_the_highest_id_and_the_tombstones_survive_a_lost_index(tmp_path):
    d = tmp_path / "notes"
    t = NoteTool(d)
    for i in range(4):
        t.create(f"n{i}")
    t.delete("note-0002")
    os.unlink(d / "note-0004.md")
    lose_index(d)
    fresh = NoteTool(d)
    assert fresh.create("next").id == "note-0005"
    with pytest.raises(NoteNotFound, match="was deleted"):
        fresh.read("note-0002")
    # a damaged database is as good as none: it is replaced and rebuilt, and still no reuse
    os.unlink(d / "note-0005.md")
    (d / INDEX_DIR / "notes.sqlite3").write_bytes(b"not a database at all" * 100)
    assert NoteTool(d).create("again").id == "note-0006"


def test_a_folder_from_the_json_index_keeps_its_next_id(tmp_path):
    d = tmp_path / "notes"
    d.mkdir()
    note = Note("note-0002", "kept", "general", (), T0, T0, "x")
    (d / "note-0002.md").write_text(render_note(note), encoding="utf-8")
    (d / "index.json").write_text('{"format": 1, "next_id": 9, "notes": {}, "unreadable": {}}')
    t = NoteTool(d)
    assert t.create("after the upgrade").id == "note-0009"
    assert not (d / "index.json").exists() and [n.id for n in t.list()] == ["note-0009", "note-0002"]


# --------------------------------------------------------------------------- 2. healing


@pytest.mark.parametrize("same_tool", [True, False], ids=["same tool", "new tool"])
def test_a_note_changed_by_hand_is_seen_by_list_summary_and_as_source(tool, same_tool):
    tool.create("zlib is missing", "Could NOT find ZLIB", "general", ["zlib"])
    tool.create("toolchain", "aarch64-linux-gnu-gcc", "reference")
    edit_in_place(tool.folder / "note-0001.md", "type: general", "type: blocker")
    t = tool if same_tool else NoteTool(tool.folder)
    assert [n.id for n in t.list(type="blocker")] == ["note-0001"]
    assert [b["id"] for b in t.summary()["blockers"]] == ["note-0001"]
    packets = t.as_source()("anything at all")
    assert [(p.metadata["note_id"], p.priority) for p in packets] == [("note-0001", 1.5)]
    assert t.read("note-0001").type == "blocker"


def test_content_changed_by_hand_is_searched_and_read_as_it_is_now(tool):
    tool.create("build log", "all good")
    edit_in_place(tool.folder / "note-0001.md", "all good", "undefined reference to inflate")
    assert [n.id for n in tool.search("inflate")] == ["note-0001"]
    assert tool.read("note-0001").content == "undefined reference to inflate"
    edit_in_place(tool.folder / "note-0001.md", "undefined reference to inflate", "fixed now, ok")
    assert tool.search("inflate") == []  # a stale hit is checked against its file, then dropped


class NoWatch:
    """A FolderWatch where the kernel cannot tell (macOS): never active."""

    def __init__(self, folder=None):
        self.fd = None

    active = False

    def changes(self):
        return None

    def close(self):
        pass


def test_without_inotify_every_file_is_checked_before_list_summary_and_search(tmp_path, monkeypatch):
    import solutions.notes.sync as sync
    monkeypatch.setattr(sync, "FolderWatch", NoWatch)
    t = NoteTool(tmp_path / "notes", clock=Clock())
    t.create("build log", "all good", "general")
    edit_in_place(t.folder / "note-0001.md", "type: general", "type: blocker")
    assert [n.id for n in t.list(type="blocker")] == ["note-0001"]
    edit_in_place(t.folder / "note-0001.md", "all good", "undefined reference to inflate")
    assert [n.id for n in t.search("inflate")] == ["note-0001"]
    edit_in_place(t.folder / "note-0001.md", "type: blocker", "type: general")
    assert t.summary()["blockers"] == []


def test_a_crash_between_the_notes_write_and_the_indexs_is_healed(tool, monkeypatch):
    tool.create("zlib is missing", "Could NOT find ZLIB", "general")

    def crash(*args, **kwargs):
        raise OSError("killed between the note file and the index")

    monkeypatch.setattr(NoteIndex, "put", crash)
    with pytest.raises(OSError, match="killed"):
        tool.update("note-0001", type="blocker")
    monkeypatch.undo()
    assert parse_note((tool.folder / "note-0001.md").read_text()).type == "blocker"  # file written
    assert [n.id for n in tool.list(type="blocker")] == ["note-0001"]
    assert [b["id"] for b in NoteTool(tool.folder).summary()["blockers"]] == ["note-0001"]


def test_files_added_or_removed_behind_the_index_back_are_seen_at_once(tool):
    tool.create("a", "alpha")
    tool.create("b", "beta")
    other = Note("note-0007", "dropped in by hand", "blocker", (), T0, T0, "zlib notes")
    (tool.folder / "note-0007.md").write_text(render_note(other), encoding="utf-8")
    os.unlink(tool.folder / "note-0002.md")
    assert [n.id for n in tool.search("zlib")] == ["note-0007"]
    assert {n.id for n in tool.list()} == {"note-0001", "note-0007"}
    assert tool.summary()["total"] == 2
    with pytest.raises(NoteNotFound):
        tool.read("note-0002")
    assert tool.create("c", "x").id == "note-0008"


@pytest.mark.parametrize("damage", ["garbage", "empty", "truncated", "table dropped",
                                    "another folder's", "deleted"])
def test_a_damaged_or_foreign_index_is_rebuilt_from_the_files(tmp_path, damage):
    d = tmp_path / "notes"
    t = NoteTool(d, clock=Clock())
    t.create("a", "alpha", "task_state", ["x"])
    t.create("b", "beta", "blocker", ["y"])
    expected = [(n.id, n.type, n.tags) for n in t.list()]
    db = d / INDEX_DIR / "notes.sqlite3"
    t.index.close()
    if damage == "garbage":
        db.write_bytes(os.urandom(8192))
    elif damage == "empty":
        db.write_bytes(b"")
    elif damage == "truncated":
        db.write_bytes(db.read_bytes()[:1500])
    elif damage == "table dropped":
        with sqlite3.connect(db) as con:
            con.execute("DROP TABLE postings")
    elif damage == "another folder's":
        other = NoteTool(tmp_path / "other", clock=Clock())
        other.create("unrelated", "gamma", "general")
        other.index.close()
        for suffix in ("", "-wal", "-shm"):
            if Path(f"{other.index.path}{suffix}").exists():
                shutil.copy(f"{other.index.path}{suffix}", f"{db}{suffix}")
    else:
        lose_index(d)
    fresh = NoteTool(d)
    assert [(n.id, n.type, n.tags) for n in fresh.list()] == expected
    assert [n.id for n in fresh.search("beta")] == ["note-0002"]
    assert fresh.create("c").id == "note-0003"


# --------------------------------------------------------------------------- 3. damaged notes


def test_a_damaged_note_is_reported_and_every_other_note_lists_and_searches(tool):
    for name in ("zlib alpha", "zlib beta", "zlib gamma"):
        tool.create(name, "zlib notes")
    broken = tool.folder / "note-0002.md"
    edit_in_place(broken, "title: zlib beta", "title: [broken")
    damaged_text = broken.read_text()
    assert [n.id for n in tool.list()] == ["note-0003", "note-0001"]
    assert [n.id for n in tool.search("zlib")] == ["note-0003", "note-0001"]
    assert len(tool.problems) == 1 and tool.problems[0].startswith("note-0002.md: the YAML")
    summary = tool.summary()
    assert summary["total"] == 2 and [d["id"] for d in summary["damaged"]] == ["note-0002"]
    for action in (lambda: tool.read("note-0002"), lambda: tool.update("note-0002", content="x"),
                   lambda: tool.delete("note-0002")):
        with pytest.raises(NoteFormatError, match="note-0002.md: the YAML front matter does not parse"):
            action()
    result = tool.run({"action": "read", "note_id": "note-0002"})
    assert result["ok"] is False and "fix or remove it" in result["error"]
    assert broken.read_text() == damaged_text  # left exactly as it was
    assert tool.create("next").id == "note-0004"  # and its id stays taken
    edit_in_place(broken, "title: [broken", "title: zlib beta, fixed")
    assert [n.id for n in tool.search("zlib")] == ["note-0003", "note-0002", "note-0001"]
    assert tool.problems == [] and tool.read("note-0002").title == "zlib beta, fixed"


def test_an_unreadable_note_is_read_once_not_on_every_call(tool, monkeypatch):
    tool.create("fine", "x")
    (tool.folder / "note-0002.md").write_text("not a note at all")
    reads = []
    real = note_files.read_note_file
    monkeypatch.setattr(note_files, "read_note_file", lambda *a: reads.append(a[1]) or real(*a))
    assert [n.id for n in tool.list()] == ["note-0001"]
    assert tool.problems == ["note-0002.md: a note file must start with a '---' line (YAML front matter)"]
    tool.list()
    NoteTool(tool.folder).list()
    assert reads == ["note-0002"]


# --------------------------------------------------------------------------- 4. killed writers

KILLED_WRITER = textwrap.dedent("""
    import os, sys
    from solutions.notes import NoteTool
    os.replace = lambda *args: os._exit(9)   # die after the temporary file is written
    NoteTool(sys.argv[1]).update("note-0001", content="half-way " * 10000)
""")


def test_the_leftovers_of_a_killed_writer_are_removed_on_the_next_open(tool):
    tool.create("state", "old content")
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(tool.folder)], env=env)
    assert done.returncode == 9
    assert [p.name for p in tool.folder.glob(".tmp-*.part")]  # the killed writer's leftover
    fresh = NoteTool(tool.folder)
    assert fresh.read("note-0001").content == "old content"
    assert list(tool.folder.glob(".tmp-*.part")) == []


# --------------------------------------------------------------------------- 5. cost


def write_folder(folder: Path, n: int) -> None:
    folder.mkdir(parents=True)
    for i in range(1, n + 1):
        note = Note(f"note-{i:04d}", f"note {i} about zlib", NOTE_TYPES[i % 6], ("zlib",),
                    T0 + timedelta(minutes=i), T0 + timedelta(minutes=i), f"text {i} 交叉编译 zlib")
        (folder / f"{note.id}.md").write_text(render_note(note), encoding="utf-8")


def folder_state(folder: Path) -> dict:
    """Every file outside the index with its size and modification time."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file() and INDEX_DIR not in p.relative_to(folder).parts}


@pytest.mark.parametrize("n", [30, 300])
def test_search_reads_no_note_file_and_create_writes_only_its_own(tmp_path, monkeypatch, n):
    folder = tmp_path / "notes"
    write_folder(folder, n)
    t = NoteTool(folder)
    t.summary()  # open: the index is built from the files
    opened, stats = [], []
    real_open, real_lstat = os.open, os.lstat
    monkeypatch.setattr(os, "open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k))
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: stats.append(str(path)) or real_lstat(path, *a, **k))
    found = t.search("交叉编译 zlib", limit=5)
    assert len(found) == 5
    note_files_opened = [p for p in opened if p.endswith(".md")]
    assert note_files_opened == [] and len([p for p in stats if p.endswith(".md")]) <= 5
    before = folder_state(folder)
    t.create("one more", "x")
    after = folder_state(folder)
    changed = {name for name in after if before.get(name) != after[name]}
    assert changed == {f"note-{n + 1:04d}.md", ".highest-id"}


# --------------------------------------------------------------------------- properties

WORDS = ["zlib", "cmake", "inflate", "toolchain", "链接", "主机", "交叉编译", "找不到", "库", "qemu"]
text = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
note_fields = st.tuples(text.filter(str.strip), text, st.sampled_from(NOTE_TYPES),
                        st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True),
                        st.integers(0, 5))


@settings(max_examples=40)
@given(notes=st.lists(note_fields, min_size=1, max_size=25), query=text,
       limit=st.integers(0, 8), note_type=st.none() | st.sampled_from(NOTE_TYPES),
       tag=st.none() | st.sampled_from(["a", "b"]))
def test_the_index_answers_like_the_files(tmp_path_factory, notes, query, limit, note_type, tag):
    folder = tmp_path_factory.mktemp("prop") / "notes"
    minutes = iter(range(1000))
    t = NoteTool(folder, clock=lambda: T0)
    for title, content, kind, tags, hour in notes:
        t.clock = lambda hour=hour: T0 + timedelta(hours=hour, minutes=next(minutes) % 3)
        t.create(title, content, kind, tags)
    truth = [parse_note(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("note-*.md"))]
    wanted = [n for n in truth if (note_type is None or n.type == note_type)
              and (tag is None or tag in n.tags)]
    tags = None if tag is None else [tag]
    assert t.search(query, limit, note_type, tags) == search_notes(wanted, query, limit)
    assert t.list(note_type, tags) == search_sorted(wanted)


def search_sorted(notes):
    return sorted(notes, key=lambda n: (-n.updated_at.timestamp(), -int(n.id[5:])))


class FolderUnderAbuse(RuleBasedStateMachine):
    """Actions through the tool interleaved with what people and crashes do to the files."""

    def __init__(self):
        super().__init__()
        import tempfile
        self.tmp = tempfile.TemporaryDirectory()
        self.folder = Path(self.tmp.name) / "notes"
        self.tool = NoteTool(self.folder, clock=Clock())
        self.issued: list[str] = []

    def teardown(self):
        self.tool.index.close()
        self.tmp.cleanup()

    def files(self) -> list[Path]:
        return sorted(self.folder.glob("note-*.md"))

    @rule(title=text.filter(str.strip), kind=st.sampled_from(NOTE_TYPES))
    def create(self, title, kind):
        self.issued.append(self.tool.create(title, "zlib " + title, kind).id)

    @precondition(lambda self: self.files())
    @rule(data=st.data(), kind=st.sampled_from(NOTE_TYPES))
    def update(self, data, kind):
        path = data.draw(st.sampled_from(self.files()))
        try:
            self.tool.update(path.stem, type=kind, content="updated zlib")
        except NoteFormatError:
            pass  # a damaged note is refused, and left alone

    @precondition(lambda self: self.files())
    @rule(data=st.data())
    def delete(self, data):
        path = data.draw(st.sampled_from(self.files()))
        try:
            self.tool.delete(path.stem)
        except NoteFormatError:
            pass

    @precondition(lambda self: self.files())
    @rule(data=st.data(), kind=st.sampled_from(NOTE_TYPES))
    def edit_by_hand(self, data, kind):
        path = data.draw(st.sampled_from(self.files()))
        text = path.read_text(encoding="utf-8")
        if text.startswith("---\n"):
            edit_in_place(path, text.split("\ntype: ")[1].split("\n")[0], kind)

    @precondition(lambda self: self.files())
    @rule(data=st.data())
    def remove_by_hand(self, data):
        data.draw(st.sampled_from(self.files())).unlink()

    @precondition(lambda self: self.files())
    @rule(data=st.data())
    def damage_by_hand(self, data):
        data.draw(st.sampled_from(self.files())).write_text("---\ntitle: [broken\n---\n")

    @rule()
    def lose_the_index(self):
        self.tool.index.close()
        lose_index(self.folder)

    @rule()
    def reopen(self):
        self.tool.index.close()
        self.tool = NoteTool(self.folder, clock=self.tool.clock)

    @rule()
    def rebuild(self):
        self.tool.rebuild_index()

    @invariant()
    def ids_are_never_reused(self):
        assert len(self.issued) == len(set(self.issued))

    @invariant()
    def the_tool_says_what_the_files_say(self):
        good, damaged = {}, set()
        for path in self.files():
            try:
                good[path.stem] = parse_note(path.read_text(encoding="utf-8"))
            except NoteFormatError:
                damaged.add(path.stem)
        assert self.tool.list() == search_sorted(good.values())
        assert {d["id"] for d in self.tool.summary()["damaged"]} == damaged
        assert self.tool.search("zlib", limit=50) == search_notes(good.values(), "zlib", limit=50)


FolderUnderAbuse.TestCase.settings = settings(max_examples=25, stateful_step_count=12)
test_a_folder_under_abuse = FolderUnderAbuse.TestCase
