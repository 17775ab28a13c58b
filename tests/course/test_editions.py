"""The Chinese edition cannot drift from the English one (course.editions).

A built Chinese notebook must equal what its English notebook and translation build now: code
cells, outputs, tags and ids identical; every Markdown cell translated from the English text it
has today (a changed English cell fails here, named). The glossary's avoided variants appear in
no translation.
"""
from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path

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


def _avoided():
    """The glossary's avoided variants, each with the term to use, and a pattern finding them."""
    avoided = {variant: chinese for _, chinese, avoid in _glossary() for variant in avoid}
    # an English variant is a word, not part of an identifier (prompt, not prompt_tokens)
    words = [re.escape(v) if not v.isascii() else rf"(?<![A-Za-z0-9_.]){re.escape(v)}(?![A-Za-z0-9_(])"
             for v in sorted(avoided, key=len, reverse=True)]
    return avoided, re.compile("|".join(words))


# not our prose: code spans, 「…」 (a source in its own words), 《…》 (a book's title), link targets
NOT_PROSE = re.compile(r"```[\s\S]*?```|`[^`]*`|「[^」]*」|《[^》]*》|\]\([^)]*\)")


def _variants_in(texts):
    avoided, pattern = _avoided()
    return [f"{where}: {match.group(0)} (the glossary says {avoided[match.group(0)]})"
            for where, text in texts for match in pattern.finditer(NOT_PROSE.sub("", text))]


def test_translations_never_use_a_variant_the_glossary_avoids():
    found = _variants_in((f"{path} {entry.cell_id}", entry.text) for path, entry in _translation_texts())
    assert not found, "\n".join(found)


def _catalogue():
    from babel.messages.pofile import read_po

    with open(REPO_ROOT / "course" / "locale" / "zh_CN" / "LC_MESSAGES" / "course.po", "rb") as po:
        return [message for message in read_po(po) if message.id]


def test_the_runtime_catalogue_never_uses_a_variant_the_glossary_avoids():
    texts = []
    for message in _catalogue():
        if message.id:
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            # a {placeholder} is a name in code, not a word the student reads
            texts += [(f"course.po {message.id!r}", re.sub(r"\{[^{}]*\}", "", text)) for text in strings]
    found = _variants_in(texts)
    assert not found, "\n".join(found)


def test_a_book_title_a_quotation_code_and_a_link_target_are_not_checked_as_prose():
    avoided, _ = _avoided()
    variant = next(iter(avoided))
    for wrapped in (f"《{variant}》", f"「{variant}」", f"`{variant}`", f"[x](../{variant}.md)"):
        assert _variants_in([("cell", f"正文{wrapped}正文")]) == []
    assert _variants_in([("cell", f"正文{variant}")]) != []


# ------------------------------------------------------------------------ UI words
# what the prose quotes as a label: **…**, *…* or “…”
QUOTED = re.compile(r"\*\*([^*\n]+)\*\*|(?<!\*)\*([^*\n]+)\*(?!\*)|“([^”\n]+)”")
# a Chinese label the prose names as a control: “…” or **…** before 按钮/滑块/…, or after 切换到/点击
CONTROL = re.compile(r"(?:“([^”\n]+)”|\*\*([^*\n]+)\*\*)(?=\s*(?:按钮|滑块|复选框|下拉菜单|选项卡|开关))"
                     r"|(?<=切换到)“([^”\n]+)”|(?<=点击)“([^”\n]+)”")


def _labels_not_shown(texts, catalogue):
    """Labels a Chinese text quotes that the Chinese widget does not show: an English label the
    catalogue translates (the student sees the translation), or a control named in Chinese
    with words that are no label of the catalogue."""
    english = {m.id: m.string for m in catalogue if isinstance(m.id, str) and m.string != m.id}
    chinese = {m.string for m in catalogue if isinstance(m.string, str)}
    found = []
    for where, text in texts:
        prose = NOT_PROSE.sub("", text)
        for match in QUOTED.finditer(prose):
            label = next(group for group in match.groups() if group)
            if label in english:
                found.append(f"{where}: {label!r} is shown as {english[label]!r} (a label of "
                             "printed output, which stays English, is code: `label`)")
        for match in CONTROL.finditer(prose):
            label = next(group for group in match.groups() if group)
            if label not in chinese:
                found.append(f"{where}: {label!r} is no label of the widgets (course.po)")
    return found


def test_the_prose_names_widget_labels_as_the_chinese_widget_shows_them():
    found = _labels_not_shown(((f"{path} {entry.cell_id}", entry.text)
                               for path, entry in _translation_texts()), _catalogue())
    assert not found, "\n".join(found)


def test_a_label_the_widget_does_not_show_is_found():
    from babel.messages.catalog import Message

    catalogue = [Message("Run", "运行"), Message("naive window", "朴素窗口")]
    assert _labels_not_shown([("a", "然后按 **Run**。"), ("b", "切换到“简单窗口”"),
                              ("c", "点 **运行** 按钮，切换到“朴素窗口”")], catalogue) == [
        "a: 'Run' is shown as '运行' (a label of printed output, which stays English, is code: `label`)",
        "b: '简单窗口' is no label of the widgets (course.po)"]


# ------------------------------------------------------------------------ translation memory
def _translated_cells():
    """(where, English text, Chinese text) of every translated Markdown cell of the edition."""
    for notebook in editions.translated_notebooks():
        by_hash = {e.source_hash: e for e in editions.read_entries(notebook)}
        for cell in editions.markdown_cells(editions.read_english(notebook)):
            entry = by_hash.get(editions.english_hash(cell.source))
            if entry is not None and entry.mark != "todo":
                yield f"{notebook.relative_to(REPO_ROOT)} {cell.id}", cell.source, entry.text


def test_a_remembered_sentence_has_its_one_rendering_wherever_the_english_uses_it():
    memory = editions.read_memory()
    found, used = [], set()
    for where, english, chinese in _translated_cells():
        found += [f"{where}: {miss}" for miss in editions.memory_misses(english, chinese, memory)]
        used |= {m for m in memory if m.expected_in(english)}
    assert not found, "\n".join(found)
    assert set(memory) == used, f"remembered but used by no cell: {set(memory) - used}"


def test_identical_english_cells_have_identical_chinese():
    renderings = {}
    for where, english, chinese in _translated_cells():
        renderings.setdefault(english, {}).setdefault(chinese, []).append(where)
    found = [f"{english[:60]!r}: " + " / ".join(f"{chinese[:30]!r} in {', '.join(places)}"
                                                for chinese, places in versions.items())
             for english, versions in renderings.items() if len(versions) > 1]
    assert not found, "\n".join(found)


def test_every_chapter_and_lab_title_has_one_form():
    found = []
    for where, english, chinese in _translated_cells():
        match = re.match(r"# (Chapter|Lab) (\d+)", english)
        expected = match and (f"# 第 {match.group(2)} 章：" if match.group(1) == "Chapter"
                              else f"# 实验 {match.group(2)}：")
        if expected and not chinese.startswith(expected):
            found.append(f"{where}: {chinese.splitlines()[0]!r} (write {expected}…)")
    assert not found, "\n".join(found)


def test_the_memory_finds_a_sentence_however_it_is_wrapped_and_keeps_numbers():
    memory = [editions.Remembered("{n} questions on this chapter.", "本章共 {n} 道题。")]
    assert editions.memory_misses("## Self-test\n\n4 questions on\nthis chapter.", "本章共 4 道题。", memory) == []
    assert editions.memory_misses("4 questions on this chapter.", "本章共 5 道题。", memory) == [
        "'{n} questions on this chapter.' is rendered '本章共 4 道题。'"]
    assert editions.memory_misses("Other text.", "其他。", memory) == []


def test_a_malformed_memory_is_refused(tmp_path):
    path = tmp_path / "memory.txt"
    path.write_text("en: One.\nen: Two.\nzh: 二。\n", encoding="utf-8")
    with pytest.raises(TranslationError, match="memory.txt:2"):
        editions.read_memory(path)


# ------------------------------------------------------------------------ quotations
# the four sources are kept outside the repository (docs/sources.md): beside it, or where
# COURSE_SOURCES says
SOURCES = Path(os.environ.get("COURSE_SOURCES", REPO_ROOT.parent / "shared" / "seeds"))


def _comparable(text: str) -> str:
    """Text with the differences a quotation may have from its source removed: full- and
    half-width forms, the kind of quote mark and dash, white space, our emphasis marks."""
    text = unicodedata.normalize("NFKC", text)
    for marks, plain in (("“”„", '"'), ("‘’", "'"), ("—–", "-")):
        text = re.sub(f"[{marks}]", plain, text)
    return re.sub(r"\s+|\*", "", text)


def _unquoted(quotation: str, sources: list[str]) -> bool:
    """Whether some part of a quotation is in no source (…… marks an elision between parts)."""
    parts = [part for part in map(_comparable, re.split(r"…+", quotation)) if part]
    return not parts or any(all(part not in source for source in sources) for part in parts)


def test_a_quotation_is_found_only_in_its_source():
    sources = ["上下文腐烂是指模型在长上下文中找不到信息。"]
    assert not _unquoted("上下文腐烂是指模型在长上下文中找不到信息", sources)
    assert not _unquoted("上下文腐烂是指……找不到信息", sources)             # an elision
    assert not _unquoted("**上下文腐烂**是指模型在长上下文中找不到信息", sources)  # our emphasis
    assert _unquoted("上下文腐化是指模型在长上下文中找不到信息", sources)
    assert _unquoted("", sources)


@pytest.mark.skipif(not SOURCES.is_dir(), reason=f"the sources are not at {SOURCES} (COURSE_SOURCES)")
def test_every_quotation_in_the_chinese_edition_is_the_sources_own_words():
    sources = [_comparable(path.read_text(encoding="utf-8")) for path in sorted(SOURCES.glob("*.txt"))]
    found = [f"{path} {entry.cell_id}: 「{quotation}」"
             for path, entry in _translation_texts()
             for quotation in re.findall(r"「([^」]*)」", entry.text) if _unquoted(quotation, sources)]
    assert sources and not found, "quoted in 「…」 but in no source:\n" + "\n".join(found)
