"""The notes browser's logic (lesson_support/widgets/notes.py) and its wiring."""
import shutil

import pytest

from lesson_support.widgets import notes as widget
from solutions.notes import NoteTool


@pytest.fixture
def tool(tmp_path):
    shutil.copytree(widget.SAMPLE_FOLDER, tmp_path / "notes")
    return NoteTool(tmp_path / "notes")


def test_browse_lists_newest_first_and_filters_by_type_and_tag(tool):
    assert [n.id for n in widget.browse(tool)][:2] == ["note-0008", "note-0007"]
    assert [n.id for n in widget.browse(tool, note_type="blocker")] == ["note-0007"]
    assert {n.id for n in widget.browse(tool, tag="toolchain")} == {"note-0002", "note-0008"}
    assert widget.browse(tool, note_type="blocker", tag="toolchain") == []


def test_browse_searches_chinese_and_english(tool):
    assert widget.browse(tool, query="undefined reference to inflate")[0].id == "note-0007"
    assert widget.browse(tool, query="下一步")[0].id == "note-0001"
    assert [n.id for n in widget.browse(tool, query="zlib", note_type="conclusion")] == ["note-0005"]


def test_labels_options_and_html(tool):
    assert widget.tag_options(tool)[:3] == ["(all)", "libpng", "zlib"]
    note = tool.read("note-0008")
    assert widget.note_label(note) == "note-0008 · reference · CMAKE_FIND_ROOT_PATH_MODE_LIBRARY"
    page = widget.note_html(note)
    assert "```cmake" in page and "set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)" in page
    assert "1 blocker" in widget.summary_html(tool) and "note-0007" in widget.summary_html(tool)


def test_the_browser_filters_searches_and_opens(tool):
    box = widget.notes_browser(tool)
    kind, tag, query = box.children[1].children
    listing, viewer = box.children[2], box.children[3]
    assert len(listing.options) == 7 and "CMAKE_FIND_ROOT_PATH" in viewer.value
    kind.value = "blocker"
    assert [v for _, v in listing.options] == ["note-0007"] and "inflate" in viewer.value
    kind.value = "(all)"
    query.value = "nothing matches this"
    assert listing.options == () and "No note matches" in viewer.value
    query.value = "zlib"
    listing.value = "note-0005"
    assert "deps/zlib" in viewer.value


def test_the_default_browser_works_on_a_copy_and_never_writes_the_committed_sample():
    before = sorted(p.name for p in widget.SAMPLE_FOLDER.rglob("*"))
    box = widget.notes_browser()
    assert len(box.children[2].options) == 7
    assert sorted(p.name for p in widget.SAMPLE_FOLDER.rglob("*")) == before


def test_a_damaged_note_shows_in_the_summary(tool):
    (tool.folder / "note-0003.md").write_text("not a note")
    page = widget.summary_html(tool)
    assert "6 notes" in page and "damaged, left as it is: note-0003.md" in page
