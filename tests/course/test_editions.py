"""The Chinese edition cannot drift from the English one (course.editions).

A built Chinese notebook must equal what its English notebook and translation build now: code
cells, outputs, tags and ids identical; every Markdown cell translated from the English text it
has today (a changed English cell fails here, named). The glossary's avoided variants appear in
no translation.
"""
from __future__ import annotations

import json
import re

import nbformat
import pytest

from course import editions
from course.editions import Entry, TranslationError
from course.paths import REPO_ROOT


def _notebook(*texts: str, code: str = "print(1)"):
    nb = nbformat.v4.new_notebook()
    for i, text in enumerate(texts):
        nb.cells.append(nbformat.v4.new_markdown_cell(text, id=f"cell-{2 * i:03d}"))
        nb.cells.append(nbformat.v4.new_code_cell(code, id=f"cell-{2 * i + 1:03d}"))
    return nb


def _translated(nb, prefix="译文"):
    return [Entry(c.id, editions.english_hash(c.source), f"{prefix}{i}")
            for i, c in enumerate(editions.markdown_cells(nb))]


# ------------------------------------------------------------------------ the file format
def test_entries_round_trip_through_the_file_format():
    entries = [Entry("cell-000", "0123456789ab", "# 标题\n\n正文"),
               Entry("what-it-is", "ba9876543210", "English still", "todo")]
    assert editions.parse(editions.render(entries)) == entries


@pytest.mark.parametrize("text, says", [
    ("stray words\n<!-- cell-000 en:0123456789ab -->\n中文", "text before the first entry"),
    ("<!-- cell-000 en:0123456789ab -->\n一\n<!-- cell-002 en:0123456789ab -->\n二", "same English"),
    ("<!-- cell-000 en:0123456789ab -->\n\n", "empty translation"),
])
def test_a_malformed_translation_file_is_refused_with_the_reason(text, says):
    with pytest.raises(TranslationError, match=says):
        editions.parse(text, "x.md")


# ------------------------------------------------------------------------ drift
def test_a_changed_english_cell_is_named_and_its_old_translation_kept_as_stale():
    nb = _notebook("# One", "Two")
    entries = _translated(nb)
    assert editions.mismatches(nb, entries) == []
    nb.cells[2].source = "Two, revised"
    assert editions.mismatches(nb, entries) == [
        "cell-002: its English text changed since it was translated (run `python -m "
        "course.editions skeleton` and revise the stale entry)"]
    with pytest.raises(TranslationError, match="cell-002"):
        editions.translate(nb, entries)
    updated, counts = editions.update(nb, entries)
    assert counts == {"kept": 1, "todo": 0, "stale": 1, "dropped": 0}
    assert (updated[1].text, updated[1].mark) == ("译文1", "stale")
    assert updated[1].source_hash == editions.english_hash("Two, revised")
    assert editions.mismatches(nb, updated) == ["cell-002: marked stale"]


def test_moving_or_inserting_english_cells_keeps_every_translation():
    nb = _notebook("# One", "Two")
    entries = _translated(nb)
    moved = _notebook("A new first cell", "# One", "Two")   # every id shifts by two
    updated, counts = editions.update(moved, entries)
    assert counts == {"kept": 2, "todo": 1, "stale": 0, "dropped": 0}
    assert [(e.cell_id, e.mark) for e in updated] == [("cell-000", "todo"), ("cell-002", None),
                                                       ("cell-004", None)]
    assert updated[0].text == "A new first cell"    # a todo holds the English to translate


def test_a_translation_of_a_removed_cell_is_dropped_and_counted():
    entries = _translated(_notebook("# One", "Two"))
    _, counts = editions.update(_notebook("# One"), entries)
    assert counts["dropped"] == 1


def test_building_copies_code_and_outputs_and_replaces_only_the_prose():
    nb = _notebook("# One", "See [the sources](../docs/sources.md) and [the lab](../labs/x.ipynb)")
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    entries = _translated(nb)
    entries[1].text = "见[来源](../docs/sources.md)与[实验](../labs/x.ipynb)"
    built = editions.translate(nb, entries)
    assert [c.source for c in built.cells] == ["译文0", nb.cells[1].source,
                                               "见[来源](../../docs/sources.md)与[实验](../labs/x.ipynb)",
                                               nb.cells[3].source]
    assert built.cells[1].outputs == nb.cells[1].outputs
    assert built.metadata.course.language == "zh-CN" and "course" not in nb.metadata


def test_links_are_rewritten_for_the_deeper_folder():
    assert editions.localise_links("[a](../README.md#start) [b](../notebooks/01_x.ipynb) "
                                   "[c](../data/x.json) [d](#here)") == \
        "[a](../../README.zh-CN.md#start) [b](../notebooks/01_x.ipynb) [c](../../data/x.json) [d](#here)"


def test_the_readme_is_translated_section_by_section():
    sections = editions.readme_sections("# Title\n\nintro\n\n## Start\n\nrun it\n\n## Layout\n\ntree\n")
    assert [(s.id, s.source.splitlines()[0]) for s in sections] == [
        ("section-00", "# Title"), ("section-01", "## Start"), ("section-02", "## Layout")]


# ------------------------------------------------------------------------ the committed edition
BUILT = sorted(p for folder in editions.FOLDERS for p in (editions.EDITION_DIR / folder).glob("*.ipynb"))


def _english_of(path):
    return REPO_ROOT / path.parent.name / path.name


@pytest.mark.parametrize("built", BUILT, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_chinese_notebook_is_current_with_its_english_notebook(built):
    english = _english_of(built)
    assert english.exists(), f"{built.relative_to(REPO_ROOT)} has no English notebook"
    problems = editions.problems(english)
    assert not problems, "the translation no longer fits the English notebook:\n" + "\n".join(problems)
    expected = editions.build(english)
    assert json.loads(nbformat.writes(nbformat.read(built, as_version=4))) == \
        json.loads(nbformat.writes(expected)), (
        f"{built.relative_to(REPO_ROOT)} is not what `python -m course.editions build "
        f"{english.relative_to(REPO_ROOT)}` writes now: rebuild it")


@pytest.mark.parametrize("built", BUILT, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_code_cells_their_outputs_tags_and_ids_are_identical_between_editions(built):
    english = nbformat.read(_english_of(built), as_version=4)
    chinese = nbformat.read(built, as_version=4)
    assert [(c.cell_type, c.id, c.metadata) for c in chinese.cells] == \
        [(c.cell_type, c.id, c.metadata) for c in english.cells]
    code = [(c.source, c.outputs) for c in english.cells if c.cell_type == "code"]
    assert [(c.source, c.outputs) for c in chinese.cells if c.cell_type == "code"] == code
    assert chinese.metadata.course.language == "zh-CN"


def test_the_readme_translation_fits_the_english_readme():
    if not (REPO_ROOT / "README.zh-CN.md").exists():
        pytest.fail("README.zh-CN.md is missing (python -m course.editions skeleton README.md)")
    problems = editions.problems(REPO_ROOT / "README.md")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------ terms
def _glossary():
    rows = []
    for line in (REPO_ROOT / "docs" / "glossary.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 3 and cells[0] not in ("English", "---"):
            rows.append((cells[0], cells[1], [v.strip() for v in cells[2].split(",") if v.strip()]))
    return rows


def test_the_glossary_has_one_chinese_term_per_english_term():
    rows = _glossary()
    assert len(rows) > 50
    english = [r[0] for r in rows]
    assert len(english) == len(set(english)), "an English term is listed twice"
    for term, chinese, avoid in rows:
        assert chinese and chinese not in avoid, term


def _translation_texts():
    files = sorted(editions.TRANSLATIONS_DIR.rglob("*.md")) + [REPO_ROOT / "README.zh-CN.md"]
    for path in files:
        if path.exists():
            for entry in editions.parse(path.read_text(encoding="utf-8"), str(path)):
                if entry.mark != "todo":
                    yield path.relative_to(REPO_ROOT), entry


def test_translations_never_use_a_variant_the_glossary_avoids():
    avoided = {variant: chinese for _, chinese, avoid in _glossary() for variant in avoid}
    pattern = re.compile("|".join(map(re.escape, sorted(avoided, key=len, reverse=True))))
    found = []
    for path, entry in _translation_texts():
        # code spans are code, and 「…」 quotes a source in its own words: neither is our prose
        prose = re.sub(r"`[^`]*`|「[^」]*」", "", entry.text)
        for match in pattern.finditer(prose):
            found.append(f"{path} {entry.cell_id}: {match.group(0)} (the glossary says "
                         f"{avoided[match.group(0)]})")
    assert not found, "\n".join(found)
