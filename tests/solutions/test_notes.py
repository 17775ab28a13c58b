"""NoteTool (solutions/notes/): the file format and its exact round trip, hostile ids,
ids unique for ever, atomic writes, two processes writing at once, the seven actions, search in
Chinese and English, and notes feeding a GSSC context. The index's promises (healing, damaged
files, leftovers, scale) are in test_notes_index.py."""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solutions.gssc import ContextBuilder, ContextConfig, Packet
from solutions.notes import (INDEX_DIR, NOTE_TYPES, TOOL_SPEC, InvalidNoteId, Note, NoteError,
                             NoteFormatError, NoteNotFound, NoteTool, check_note_id, note_path,
                             note_to_packet, parse_note, render_note, search_notes,
                             write_atomic)
from lesson_support.notes_scenario import replay_scenario
from course.paths import DATA_DIR, REPO_ROOT

DATA = DATA_DIR / "notes"
CN = timezone(timedelta(hours=8))
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=CN)
HOSTILE_IDS = ["../../x", "../note-0001", "/etc/passwd", "note-0001/../../x", "note-0001\x00",
               "note-0001.md", "NOTE-0001", "note-1", " note-0001", "note-0001\n", "",
               "note-" + "9" * 5000, "a" * 10_000, "..", ".", "note-０００１"]


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, start=T0):
        self.now = start

    def __call__(self):
        return self.now

    def tick(self, **delta):
        self.now += timedelta(**delta)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def tool(tmp_path, clock):
    return NoteTool(tmp_path / "notes", clock=clock)


def snapshot(root: Path) -> dict:
    """Every file under root with its bytes (to prove nothing changed), except the index's
    database files (SQLite updates its shared-memory file even when it only reads)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and INDEX_DIR not in p.relative_to(root).parts}


def index_rows(folder: Path) -> list:
    """What the index holds about the notes (to prove a refused call changed nothing)."""
    import sqlite3
    db = sqlite3.connect(f"file:{folder / INDEX_DIR / 'notes.sqlite3'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT id, file_key, problem, title, type, tags, content FROM notes "
                          "ORDER BY id").fetchall()
    finally:
        db.close()


def lose_index(folder: Path) -> None:
    """Delete the index, whatever it is (it is a cache)."""
    shutil.rmtree(folder / INDEX_DIR, ignore_errors=True)


# --------------------------------------------------------------------------- the format


def test_a_note_file_is_yaml_front_matter_then_the_content_verbatim(tool):
    note = tool.create("zlib 找不到", "Could NOT find ZLIB\n", "blocker", ["zlib", "cmake"])
    text = (tool.folder / "note-0001.md").read_text(encoding="utf-8")
    assert text == (
        "---\nid: note-0001\ntitle: zlib 找不到\ntype: blocker\ntags: [zlib, cmake]\n"
        "created_at: '2025-03-01T09:00:00+08:00'\nupdated_at: '2025-03-01T09:00:00+08:00'\n"
        "---\nCould NOT find ZLIB\n")
    assert parse_note(text) == note


TRICKY = ["---", "---\ntitle: fake\n---", "...", "a: b", "- x", "# heading", "'q'", '"', "yes",
          "null", "2025-01-01", "1.0", "  lead", "trail  ", "\r\nwindows\r\n", "\x00\x85\u2028",
          "line\n\n---\n\nline", "{not: json}", "---\n---\n---", ""]


@pytest.mark.parametrize("text", TRICKY)
def test_delimiters_and_front_matter_lookalikes_round_trip_exactly(tool, text):
    title = text if text.strip() else "empty"
    note = tool.create(title, text, "general", ["---", "a: b"])
    again = NoteTool(tool.folder).read(note.id)  # a fresh tool reads it back from disk
    assert (again.title, again.content, again.tags) == (title, text, ("---", "a: b"))


settings_fast = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings_fast
@given(title=st.text(min_size=1).filter(str.strip), content=st.text(),
       tags=st.lists(st.text(min_size=1, max_size=20).filter(
           lambda t: t.strip() and "\n" not in t and "\r" not in t), max_size=4, unique=True))
def test_any_title_content_and_tags_round_trip(title, content, tags):
    note = Note("note-0042", title, "conclusion", tuple(tags), T0, T0 + timedelta(hours=1), content)
    text = render_note(note)
    assert parse_note(text) == note
    assert text.endswith(content)


@pytest.mark.parametrize("text, message", [
    ("no front matter", "must start"),
    ("---\nid: note-0001\n", "never closed"),
    ("---\n[unclosed\n---\nbody", "does not parse"),
    ("---\n- a list\n---\nbody", "mapping"),
    ("---\nid: note-0001\ntitle: t\n---\nbody", "missing"),
    ("---\nid: ../x\ntitle: t\ntype: general\ntags: []\ncreated_at: '2025-03-01T09:00:00'\n"
     "updated_at: '2025-03-01T09:00:00'\n---\n", "invalid note id"),
    ("---\nid: note-0001\ntitle: t\ntype: secret\ntags: []\ncreated_at: '2025-03-01T09:00:00'\n"
     "updated_at: '2025-03-01T09:00:00'\n---\n", "note type"),
    ("---\nid: note-0001\ntitle: t\ntype: general\ntags: []\ncreated_at: '2025-03-01T09:00:00'\n"
     "updated_at: '2025-03-01T09:00:00'\nowner: me\n---\n", "unknown fields"),
])
def test_malformed_note_files_get_a_clear_error(text, message):
    with pytest.raises(NoteFormatError, match=message):
        parse_note(text)


# --------------------------------------------------------------------------- ids


@pytest.mark.parametrize("bad", HOSTILE_IDS + [None, 7, b"note-0001"])
def test_hostile_ids_are_refused(bad):
    with pytest.raises(InvalidNoteId):
        check_note_id(bad)


def test_good_ids_map_to_files_inside_the_folder(tmp_path):
    assert check_note_id("note-0001") == "note-0001"
    assert note_path(tmp_path, "note-123456789012") == tmp_path / "note-123456789012.md"


@pytest.mark.parametrize("bad", HOSTILE_IDS)
def test_hostile_ids_touch_nothing_outside_the_folder(tmp_path, clock, bad):
    (tmp_path / "x").write_text("outside")
    (tmp_path / "x.md").write_text("outside")
    tool = NoteTool(tmp_path / "notes", clock=clock)
    tool.create("inside", "content")
    before = snapshot(tmp_path)
    for call in (lambda: tool.read(bad), lambda: tool.update(bad, content="pwned"),
                 lambda: tool.delete(bad)):
        with pytest.raises(InvalidNoteId):
            call()
    for action in ("read", "update", "delete"):
        result = tool.run({"action": action, "note_id": bad, "content": "pwned"} if action == "update"
                          else {"action": action, "note_id": bad})
        assert result["ok"] is False and "invalid note id" in result["error"]
    assert snapshot(tmp_path) == before


def test_a_symlink_planted_in_the_folder_is_not_followed(tmp_path, clock):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    tool = NoteTool(tmp_path / "notes", clock=clock)
    os.symlink(secret, tool.folder / "note-0001.md")
    problems = tool.rebuild_index()
    assert problems and "cannot be opened safely" in problems[0]
    with pytest.raises(NoteFormatError, match="cannot be opened safely"):
        tool.read("note-0001")
    assert tool.create("new", "x").id == "note-0002"  # the planted name stays taken
    assert secret.read_text() == "top secret"


def test_ids_are_never_reused_even_after_delete_and_a_lost_index(tool, clock):
    first = [tool.create(f"n{i}", "x").id for i in range(3)]
    assert first == ["note-0001", "note-0002", "note-0003"]
    tool.delete("note-0003")
    assert tool.create("n3", "x").id == "note-0004"
    tool.delete("note-0004")
    lose_index(tool.folder)
    fresh = NoteTool(tool.folder, clock=clock)
    assert fresh.create("again", "x").id == "note-0005"
    with pytest.raises(NoteNotFound, match="was deleted"):
        fresh.read("note-0004")


# --------------------------------------------------------------------------- atomic writes


def test_a_crash_while_writing_leaves_the_old_note_intact(tool, monkeypatch):
    note = tool.create("state", "old content")
    original = (tool.folder / "note-0001.md").read_bytes()

    def crash(*args):
        raise OSError("disk died mid-write")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="mid-write"):
        tool.update(note.id, content="new content " * 1000)
    monkeypatch.undo()
    assert (tool.folder / "note-0001.md").read_bytes() == original
    assert not [p for p in tool.folder.iterdir() if p.name.startswith(".tmp-")]
    assert NoteTool(tool.folder).read(note.id).content == "old content"


def test_a_crash_halfway_through_the_data_leaves_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "f.md"
    target.write_text("old")
    real_fsync = os.fsync

    def fail(fd):
        raise OSError("power cut")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="power cut"):
        write_atomic(target, "new" * 10_000)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["f.md"]


def test_the_new_text_is_fsynced_beside_the_target_then_renamed_over_it(tmp_path, monkeypatch):
    """The protocol lab 06 checks: a .tmp-*.part file in the target's folder, fsynced, then
    os.replace'd over the target, once."""
    target = tmp_path / "note-0001.md"
    target.write_text("old")
    calls, real_fsync, real_replace = [], os.fsync, os.replace

    def fsync(fd):
        calls.append(("fsync", os.fstat(fd).st_ino))
        real_fsync(fd)

    def replace(src, dst):
        calls.append(("replace", Path(src), Path(dst), os.stat(src).st_ino))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    write_atomic(str(target), "新的\n")
    renames = [c for c in calls if c[0] == "replace"]
    assert len(renames) == 1
    _, source, destination, inode = renames[0]
    assert destination == target and source.parent == tmp_path
    assert re.fullmatch(r"\.tmp-[^/]*\.part", source.name)
    assert ("fsync", inode) in calls[:calls.index(renames[0])]
    assert target.read_bytes() == "新的\n".encode() and [p.name for p in tmp_path.iterdir()] == [target.name]


# --------------------------------------------------------------------------- the index


def test_a_note_written_behind_the_index_back_is_picked_up(tool):
    tool.create("a", "alpha")
    other = Note("note-0007", "dropped in by hand", "reference", (), T0, T0, "zlib notes")
    (tool.folder / "note-0007.md").write_text(render_note(other), encoding="utf-8")
    assert [n.id for n in tool.search("zlib")] == ["note-0007"]
    assert tool.create("b", "x").id == "note-0008"


# --------------------------------------------------------------------------- two processes

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from solutions.notes import NoteTool
    folder, name, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    tool = NoteTool(folder)
    while not go.exists():
        time.sleep(0.005)
    for i in range(count):
        tool.create(f"{name} {i}", f"written by {name}", "general", [name])
""")


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    folder, go = tmp_path / "notes", tmp_path / "go"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(folder), name, "40", str(go)], env=env)
             for name in ("alpha", "beta")]
    go.touch()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    tool = NoteTool(folder)
    notes = tool.list()
    assert len(notes) == 80 and len({n.id for n in notes}) == 80
    assert sorted(n.title for n in notes) == sorted(f"{w} {i}" for w in ("alpha", "beta") for i in range(40))
    assert len(tool.list(tags=["alpha"])) == len(tool.list(tags=["beta"])) == 40
    assert tool.create("after both", "x").id == "note-0081"


# --------------------------------------------------------------------------- the actions


def test_update_changes_only_what_is_given_and_stamps_the_time(tool, clock):
    note = tool.create("title", "content", "action", ["a"])
    clock.tick(hours=2)
    new = tool.update(note.id, tags=["a", "b"])
    assert (new.title, new.content, new.type, new.tags) == ("title", "content", "action", ("a", "b"))
    assert new.created_at == note.created_at and new.updated_at == note.updated_at + timedelta(hours=2)
    with pytest.raises(NoteError, match="note type"):
        tool.update(note.id, type="secret")
    assert tool.read(note.id) == new


@pytest.mark.parametrize("kwargs, message", [
    (dict(title="  "), "title"), (dict(title=3), "title"), (dict(type="todo"), "note type"),
    (dict(tags="zlib"), "list of strings"), (dict(tags=["a\nb"]), "one line"),
    (dict(content="\ud800"), "UTF-8"),
])
def test_bad_input_is_refused_and_nothing_is_written(tool, kwargs, message):
    tool.create("existing", "note")
    before = snapshot(tool.folder)
    fields = dict(title="t", content="c") | kwargs
    rows = index_rows(tool.folder)
    with pytest.raises(NoteError, match=message):
        tool.create(**fields)
    assert snapshot(tool.folder) == before and index_rows(tool.folder) == rows
    assert tool.create("fine", "x").id == "note-0002"  # the refused call spent no id


def test_list_filters_by_type_and_all_given_tags_newest_first(tool, clock):
    a = tool.create("a", "", "blocker", ["zlib", "link"])
    clock.tick(hours=1)
    b = tool.create("b", "", "blocker", ["zlib"])
    clock.tick(hours=1)
    c = tool.create("c", "", "conclusion", ["zlib", "link"])
    assert [n.id for n in tool.list()] == [c.id, b.id, a.id]
    assert [n.id for n in tool.list(type="blocker")] == [b.id, a.id]
    assert [n.id for n in tool.list(tags=["zlib", "link"])] == [c.id, a.id]
    assert [n.id for n in tool.list(type="blocker", tags=["link"], limit=5)] == [a.id]
    assert tool.list(limit=1) == [tool.read(c.id)]


def test_summary_counts_types_and_tags_and_lists_blockers(tool, clock):
    tool.create("a", "", "blocker", ["zlib"])
    clock.tick(minutes=5)
    tool.create("b", "", "reference", ["zlib", "cmake"])
    s = tool.summary()
    assert s["total"] == 2 and s["by_type"] == {t: int(t in ("blocker", "reference")) for t in NOTE_TYPES}
    assert s["tags"] == {"zlib": 2, "cmake": 1}
    assert [b["id"] for b in s["blockers"]] == ["note-0001"]
    assert [r["id"] for r in s["recent"]] == ["note-0002", "note-0001"]
    assert s["damaged"] == []


def test_search_finds_chinese_and_english_ranked_by_relevance_then_recency(tool, clock):
    old = tool.create("交叉编译找不到 zlib", "目标平台的 zlib 库不在 sysroot 里", "blocker")
    clock.tick(hours=1)
    new = tool.create("又一次找不到 zlib", "链接时找不到目标平台的 zlib 库", "blocker")
    clock.tick(hours=1)
    eng = tool.create("CMake find_library", "set CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY", "reference")
    tool.create("unrelated", "lunch menu", "general")
    assert [n.id for n in tool.search("找不到目标平台的 zlib 库")] == [new.id, old.id]
    assert [n.id for n in tool.search("找不到 zlib")] == [new.id, old.id]  # a tie: newer first
    assert [n.id for n in tool.search("find_library ONLY")] == [eng.id]
    assert tool.search("zlib", type="reference") == []
    assert tool.search("nothing like this") == []
    # a substring search (the peer design's) finds neither: the words are in another order
    assert not any("zlib 找不到" in n.title + n.content for n in (old, new))
    assert {n.id for n in tool.search("zlib 找不到")} == {old.id, new.id}


def test_search_notes_is_a_plain_function_over_notes():
    a = Note("note-0001", "inflate", "blocker", (), T0, T0, "undefined reference to inflate")
    b = Note("note-0002", "zlib", "conclusion", (), T0, T0 + timedelta(hours=1), "zlib built")
    assert search_notes([a, b], "undefined reference inflate zlib") == [a, b]
    assert search_notes([a, b], "zlib", limit=1) == [b]
    with pytest.raises(NoteError, match="limit"):
        search_notes([a], "x", limit=-1)


def test_run_is_a_tool_call_entry_point_that_never_raises_on_bad_input(tool):
    made = tool.run({"action": "create", "title": "t", "content": "c", "type": "action", "tags": ["x"]})
    assert made["ok"] and made["note"]["id"] == "note-0001"
    assert tool.run({"action": "search", "query": "c"})["notes"][0]["content"] == "c"
    assert "content" not in tool.run({"action": "list"})["notes"][0]
    assert tool.run({"action": "summary"})["summary"]["total"] == 1
    for bad, message in [({"action": "drop"}, "action must be"), ({}, "action must be"),
                         ({"action": "read", "note_id": "note-0099"}, "no note"),
                         ({"action": "create", "title": "t", "path": "/etc"}, "does not take"),
                         ({"action": "search", "query": "x", "limit": "5"}, "limit"),
                         ({"action": "create"}, "title")]:
        result = tool.run(bad)
        assert result["ok"] is False and message in result["error"], (bad, result)
    assert set(TOOL_SPEC["function"]["parameters"]["properties"]["action"]["enum"]) == {
        "create", "read", "update", "search", "list", "summary", "delete"}


# --------------------------------------------------------------------------- notes into GSSC


def test_notes_become_packets_in_the_right_section_and_blockers_weigh_more():
    blocker = Note("note-0003", "inflate missing", "blocker", ("zlib",), T0, T0, "details")
    state = Note("note-0001", "progress", "task_state", (), T0, T0, "")
    ref = Note("note-0002", "docs", "reference", (), T0, T0, "x")
    p = note_to_packet(blocker)
    assert isinstance(p, Packet) and (p.section, p.priority, p.source) == ("State", 1.5, "notes")
    assert p.content == "inflate missing [blocker note-0003]\ndetails"
    assert p.metadata["note_id"] == "note-0003"
    assert note_to_packet(state).content == "progress [task_state note-0001]"
    assert note_to_packet(ref).section == "Evidence"


def notes_and_tombstones(folder: Path) -> dict:
    return {name: data for name, data in snapshot(folder).items()
            if name.startswith(("note-", ".deleted/"))}


def test_the_scenario_replays_to_the_committed_folder(tmp_path):
    replay_scenario(DATA / "libpng_scenario.json", tmp_path / "replayed")
    committed = snapshot(DATA / "libpng-aarch64")
    assert notes_and_tombstones(tmp_path / "replayed") == committed
    assert set(committed) == set(notes_and_tombstones(DATA / "libpng-aarch64")), \
        "the committed sample holds notes and tombstones only (no index: it is a cache)"


def test_a_partial_replay_stops_at_the_time_given_and_steps_must_be_in_order(tmp_path):
    day2 = replay_scenario(DATA / "libpng_scenario.json", tmp_path / "day2",
                           until="2025-03-02T10:00:00+08:00")
    assert [n.id for n in day2.list()] == ["note-0003", "note-0002", "note-0001"]
    assert day2.read("note-0001").updated_at == datetime(2025, 3, 1, 9, 10, tzinfo=CN)
    nothing = replay_scenario(DATA / "libpng_scenario.json", tmp_path / "none", until="2025-01-01T00:00:00Z")
    assert nothing.list() == [] and nothing.create("later", "x").id == "note-0001"
    shuffled = json.loads((DATA / "libpng_scenario.json").read_text())
    shuffled["steps"].reverse()
    (tmp_path / "shuffled.json").write_text(json.dumps(shuffled))
    with pytest.raises(NoteError, match="time order"):
        replay_scenario(tmp_path / "shuffled.json", tmp_path / "bad")


def test_notes_feed_a_context_and_the_blocker_is_kept_under_a_tight_budget(tmp_path):
    tool = replay_scenario(DATA / "libpng_scenario.json", tmp_path / "notes")
    question = json.loads((DATA / "libpng_scenario.json").read_text())["questions"][1]
    policy = Packet("You are a build engineer.", "system", question["at"])
    builder = ContextBuilder({"system": [policy], "notes": tool.as_source()},
                             ContextConfig(budget=700, reserve=200))
    built = builder.build(question["task"])
    assert not built.failures and built.tokens <= 500
    chosen = [p.metadata.get("note_id") for p in built.chosen]
    assert "note-0007" in chosen  # the open blocker
    assert chosen.index("note-0007") == 1  # chosen first, right after the pinned policy
    assert "[blocker note-0007]" in built.text.split("[State]\n")[1].split("[Evidence]\n")[0]
