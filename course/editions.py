"""The Chinese edition (中文版): notebooks generated from the English ones and a translation.

    python -m course.editions skeleton NOTEBOOK...   start (or update) a notebook's (or README.md's)
                                                     translation
    python -m course.editions build [NOTEBOOK...]    write the Chinese notebooks (all by default)
    python -m course.editions check                  what is untranslated, stale or out of date

One source of truth: a Chinese notebook is its English notebook with every Markdown cell's text
replaced by its translation. Code cells, their outputs, tags and ids are copied, so they cannot
differ; only the notebook's `course.language` metadata says "zh-CN".

A translation is a Markdown file, `translations/zh-CN/notebooks/01_agent_loop.md` for
`notebooks/01_agent_loop.ipynb` (labs likewise), with one entry per Markdown cell:

    <!-- cell-004 en:3f2a9c1b7d4e -->
    这一节……

`en:` is the SHA-256 (first 12 hex digits) of the English text the entry translates. An entry is
found by that hash, so moving or inserting English cells keeps every translation; when an English
cell's text changes, its hash no longer matches and `check` (and the test that runs it) names the
cell. The Chinese README (`README.zh-CN.md`) is written the same way, one entry per `## `
section of README.md, and is itself the edition (the headers are HTML comments). `skeleton` writes new cells as `todo` entries holding the English text, and keeps an entry
whose English changed as `stale` (the old translation, to be revised), so nothing is lost.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course.paths import CHINESE_EDITION, REPO_ROOT

LANGUAGE = CHINESE_EDITION
EDITION_DIR = REPO_ROOT / LANGUAGE              # zh-CN/notebooks, zh-CN/labs
TRANSLATIONS_DIR = REPO_ROOT / "translations" / LANGUAGE
FOLDERS = ("notebooks", "labs")
README = Path("README.md")
HEADER = re.compile(r"^<!-- ([A-Za-z0-9_-]+) en:([0-9a-f]{12})(?: (todo|stale))? -->$")


def english_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass
class Entry:
    cell_id: str
    source_hash: str
    text: str
    mark: str | None = None     # "todo" (not translated yet) or "stale" (the English changed)

    def render(self) -> str:
        mark = f" {self.mark}" if self.mark else ""
        return f"<!-- {self.cell_id} en:{self.source_hash}{mark} -->\n{self.text.strip()}\n"


class TranslationError(ValueError):
    """A translation file that cannot be read, or a notebook it does not fit."""


def parse(text: str, where: str = "translation") -> list[Entry]:
    entries: list[Entry] = []
    lines: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        match = HEADER.match(line)
        if match:
            if entries:
                entries[-1].text = "\n".join(lines).strip("\n")
            entries.append(Entry(match.group(1), match.group(2), "", match.group(3)))
            lines = []
        elif entries:
            lines.append(line)
        elif line.strip():
            raise TranslationError(f"{where}:{number}: text before the first entry header "
                                   "(<!-- CELL-ID en:HASH -->)")
    if entries:
        entries[-1].text = "\n".join(lines).strip("\n")
    seen = set()
    for entry in entries:
        if entry.source_hash in seen and entry.mark != "stale":
            raise TranslationError(f"{where}: two entries translate the same English text "
                                   f"(en:{entry.source_hash}, {entry.cell_id})")
        seen.add(entry.source_hash)
        if not entry.text:
            raise TranslationError(f"{where}: {entry.cell_id} has an empty translation")
    return entries


def render(entries: list[Entry]) -> str:
    return "\n".join(entry.render() for entry in entries)


def relative(notebook: Path) -> Path:
    """`notebooks/01_agent_loop.ipynb` for a path to that notebook (or the README) from anywhere."""
    path = Path(notebook).resolve()
    try:
        rel = path.relative_to(REPO_ROOT)
    except ValueError:
        raise TranslationError(f"{notebook} is not in the course ({REPO_ROOT})") from None
    if rel == README:
        return rel
    if len(rel.parts) != 2 or rel.parts[0] not in FOLDERS or rel.suffix != ".ipynb":
        raise TranslationError(f"{rel} is not a lesson, a lab or the README "
                               "(notebooks/*.ipynb, labs/*.ipynb, README.md)")
    return rel


def translation_path(notebook: Path) -> Path:
    rel = relative(notebook)
    if rel == README:   # the Chinese README is its own translation file (the headers are comments)
        return REPO_ROOT / "README.zh-CN.md"
    return TRANSLATIONS_DIR / rel.with_suffix(".md")


def edition_path(notebook: Path) -> Path:
    return EDITION_DIR / relative(notebook)


def markdown_cells(nb) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "markdown"]


@dataclass(frozen=True)
class Section:
    """A part of the README translated as one entry: the text from one `## ` heading to the next."""
    id: str
    source: str
    cell_type: str = "markdown"


def readme_sections(text: str) -> list[Section]:
    parts = re.split(r"(?m)^(?=## )", text)
    return [Section(f"section-{i:02d}", part.strip("\n")) for i, part in enumerate(parts) if part.strip()]


def read_english(path: Path):
    """An English notebook, or the README as a notebook-like list of sections."""
    if relative(path) == README:
        return type("Readme", (), {"cells": readme_sections((REPO_ROOT / README).read_text(encoding="utf-8"))})
    return nbformat.read(path, as_version=4)


def read_entries(notebook: Path) -> list[Entry]:
    path = translation_path(notebook)
    if not path.exists():
        return []
    return parse(path.read_text(encoding="utf-8"), str(path.relative_to(REPO_ROOT)))


def skeleton(notebook: Path) -> tuple[list[Entry], dict[str, int]]:
    """The translation file's entries brought up to the English notebook (see `update`)."""
    return update(read_english(notebook), read_entries(notebook))


def update(nb, old: list[Entry]) -> tuple[list[Entry], dict[str, int]]:
    """Translation entries brought up to an English notebook, in its cell order.

    An entry whose English is unchanged is kept (its cell id updated if the cell moved); an
    entry for a cell whose text changed is kept as `stale`; a new cell is a `todo` holding the
    English. Entries for cells that no longer exist are dropped (counted as "dropped")."""
    by_hash = {e.source_hash: e for e in old if e.mark != "stale"}
    cells = markdown_cells(nb)
    matched = {c.id: by_hash[english_hash(c.source)] for c in cells if english_hash(c.source) in by_hash}
    used = {id(e) for e in matched.values()}
    # an entry not found by its hash translated the cell that had its id: that cell changed
    by_id = {e.cell_id: e for e in old if id(e) not in used and e.mark != "todo"}
    entries, counts = [], {"kept": 0, "todo": 0, "stale": 0, "dropped": 0}
    for cell in cells:
        digest = english_hash(cell.source)
        if cell.id in matched:
            found = matched[cell.id]
            entries.append(Entry(cell.id, digest, found.text, found.mark))
            counts["todo" if found.mark == "todo" else "kept"] += 1
        elif cell.id in by_id:
            found = by_id.pop(cell.id)
            entries.append(Entry(cell.id, digest, found.text, "stale"))
            counts["stale"] += 1
            used.add(id(found))
        else:
            entries.append(Entry(cell.id, digest, cell.source, "todo"))
            counts["todo"] += 1
    counts["dropped"] = sum(1 for e in old if id(e) not in used)
    return entries, counts


# ------------------------------------------------------------------------ translation memory
MEMORY = TRANSLATIONS_DIR / "memory.txt"


@dataclass(frozen=True)
class Remembered:
    """A recurring English sentence and its one Chinese rendering; `{n}` stands for a number,
    the same in both."""
    english: str
    chinese: str

    def expected_in(self, english_text: str) -> list[str]:
        """The Chinese a translation of `english_text` must contain, once per use of the English."""
        pattern = re.escape(normalise(self.english)).replace(re.escape("{n}"), r"(\d+)")
        return [normalise(self.chinese).replace("{n}", match.group(1)) if match.groups()
                else normalise(self.chinese) for match in re.finditer(pattern, normalise(english_text))]


def normalise(text: str) -> str:
    """Runs of white space as one space (line wrapping differs between cells)."""
    return re.sub(r"\s+", " ", text).strip()


def read_memory(path: Path = MEMORY) -> list[Remembered]:
    """The translation memory: `en:` and `zh:` lines in pairs, `#` comments, blank lines between."""
    memory, english = [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        key, _, text = line.partition(": ")
        if key == "en" and english is None:
            english = text
        elif key == "zh" and english is not None:
            memory.append(Remembered(english, text))
            english = None
        else:
            raise TranslationError(f"{path.name}:{number}: expected an en: line then its zh: line")
    if english is not None:
        raise TranslationError(f"{path.name}: the last en: line has no zh: line")
    return memory


def memory_misses(english_text: str, chinese_text: str, memory: list[Remembered]) -> list[str]:
    """Each remembered sentence the English uses whose one rendering the Chinese lacks."""
    chinese = normalise(chinese_text)
    return [f"{m.english!r} is rendered {expected!r}" for m in memory
            for expected in m.expected_in(english_text) if expected not in chinese]


# ------------------------------------------------------------------------ building
_PARENT_LINK = re.compile(r"(\]\()\.\./(?!notebooks/|labs/)")


def localise_links(text: str) -> str:
    """Links written for `notebooks/` work one folder deeper, in `zh-CN/notebooks/`.

    `../labs/x` and `../notebooks/x` stay (the Chinese edition has both folders); any other
    `../x` becomes `../../x`, and the English README becomes the Chinese one."""
    text = _PARENT_LINK.sub(r"\1../../", text)
    return text.replace("](../../README.md", "](../../README.zh-CN.md")


def problems(notebook: Path) -> list[str]:
    """What keeps a notebook's Chinese edition from being built: untranslated, stale or missing
    cells (each named), a translation file that does not parse."""
    rel = relative(notebook)
    try:
        entries = read_entries(notebook)
    except TranslationError as error:
        return [str(error)]
    if not entries:
        return [f"{rel}: no translation ({translation_path(notebook).relative_to(REPO_ROOT)})"]
    return [f"{rel} {problem}" for problem in mismatches(read_english(notebook), entries)]


def mismatches(nb, entries: list[Entry]) -> list[str]:
    """Each Markdown cell of an English notebook that its translation entries do not cover."""
    by_hash = {e.source_hash: e for e in entries}
    by_id = {e.cell_id: e for e in entries}
    found = []
    for cell in markdown_cells(nb):
        entry = by_hash.get(english_hash(cell.source))
        if entry is None:
            why = ("its English text changed since it was translated (run `python -m "
                   "course.editions skeleton` and revise the stale entry)") if cell.id in by_id \
                else "not translated"
            found.append(f"{cell.id}: {why}")
        elif entry.mark:
            found.append(f"{cell.id}: marked {entry.mark}")
    return found


def translate(english, entries: list[Entry]):
    """The English notebook with its Markdown replaced by the entries' translations."""
    found = mismatches(english, entries)
    if found:
        raise TranslationError("cannot build the Chinese edition:\n  " + "\n  ".join(found))
    by_hash = {e.source_hash: e.text for e in entries}
    nb = copy.deepcopy(english)
    for cell in markdown_cells(nb):
        cell.source = localise_links(by_hash[english_hash(cell.source)])
    nb.metadata.setdefault("course", nbformat.NotebookNode())["language"] = LANGUAGE
    return nb


def build(notebook: Path) -> nbformat.NotebookNode:
    """The Chinese notebook: the English one with its Markdown translated."""
    rel = relative(notebook)
    try:
        return translate(nbformat.read(notebook, as_version=4), read_entries(notebook))
    except TranslationError as error:
        raise TranslationError(f"{rel}: {error}") from None


def refresh(notebook: Path) -> str:
    """After an English notebook changed (`course.notebooks run`): rebuild its Chinese edition
    if it has one and the translation still fits; otherwise say what is now out of date."""
    try:
        out = edition_path(notebook)
    except TranslationError:    # not one of the course's lessons or labs
        return ""
    if not out.exists():
        return ""
    try:
        nb = build(notebook)
    except TranslationError as error:
        return f"the Chinese edition is now out of date (its test fails until the translation is revised): {error}"
    nbformat.write(nb, out)
    return f"rebuilt {out.relative_to(REPO_ROOT)}"


def translated_notebooks() -> list[Path]:
    """The English notebooks that have a translation file (complete or not)."""
    found = []
    for folder in FOLDERS:
        for path in sorted((TRANSLATIONS_DIR / folder).glob("*.md")):
            found.append(REPO_ROOT / folder / path.with_suffix(".ipynb").name)
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.editions", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("skeleton").add_argument("notebooks", type=Path, nargs="+")
    sub.add_parser("build").add_argument("notebooks", type=Path, nargs="*")
    sub.add_parser("check")
    args = parser.parse_args(argv)
    try:
        if args.command == "skeleton":
            for notebook in args.notebooks:
                entries, counts = skeleton(notebook)
                path = translation_path(notebook)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(render(entries), encoding="utf-8")
                print(f"{path.relative_to(REPO_ROOT)}: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
            return 0
        if args.command == "build":
            for notebook in args.notebooks or translated_notebooks():
                out = edition_path(notebook)
                out.parent.mkdir(parents=True, exist_ok=True)
                nbformat.write(build(notebook), out)
                print(f"wrote {out.relative_to(REPO_ROOT)}")
            return 0
        readme = [REPO_ROOT / README] if translation_path(REPO_ROOT / README).exists() else []
        found = [p for notebook in translated_notebooks() + readme for p in problems(notebook)]
        print("\n".join(found) if found else "every translated notebook is complete and current")
        return 1 if found else 0
    except TranslationError as error:
        print(error, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
