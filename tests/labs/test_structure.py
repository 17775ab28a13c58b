"""The course's layout rules, checked against the one chapter registry (course/chapters.py)."""
import ast
import dataclasses
import importlib
import json
import re
import subprocess

import nbformat
import pytest

from course import chapters
from course.chapters import CHAPTERS
from course.labs import LAB_NAME, answer_modules, cell_key, cell_kind, checks_only, load_lab
from course.paths import LABS_DIR, LESSONS_DIR, REPO_ROOT

LESSON_NAME = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")
LABS = sorted(LABS_DIR.glob("*.ipynb"))
LESSONS = sorted(LESSONS_DIR.glob("*.ipynb"))
WITH_LAB = [c for c in CHAPTERS if c.lab]


def test_file_names_follow_the_nn_slug_pattern():
    assert [p.name for p in LABS if not LAB_NAME.match(p.name)] == []
    assert [p.name for p in LESSONS if not LESSON_NAME.match(p.name)] == []


def test_registry_and_files_agree():
    assert chapters.problems() == []


def test_registry_problems_are_found(monkeypatch):
    extra = chapters.Chapter("99", "missing", "Missing", "nothing", "nothing", "solutions.x", ("f",))
    monkeypatch.setattr(chapters, "CHAPTERS", CHAPTERS + (extra,))
    assert chapters.problems() == ["chapter 99: notebooks/99_missing.ipynb does not exist",
                                   "chapter 99: labs/99_missing_lab.ipynb does not exist"]


def test_readme_chapter_table_is_generated_from_the_registry():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert chapters.readme_with_table(readme) == readme, \
        "README.md's chapter table is out of date: run `python -m course.chapters --write-readme`"


def test_chapter_map_names_every_chapter_after_00():
    text = repr(chapters.chapter_map())
    assert [line[:2] for line in text.splitlines() if not line.startswith(" ")] == \
        [c.number for c in CHAPTERS[1:]]


@pytest.mark.parametrize("chapter", WITH_LAB, ids=lambda c: c.number)
def test_lab_structure(chapter):
    path = REPO_ROOT / chapter.lab
    lab = load_lab(path)
    assert lab.lab_id == path.stem == chapter.lab_id, "the lab id in the metadata must be the file name"
    assert lab.solution_module == chapter.solution_module, \
        "the lab's solution module must be the one course/chapters.py names"
    module = importlib.import_module(lab.solution_module)
    code = [c for c in lab.notebook.cells if c.cell_type == "code"]
    assert [c.outputs for c in code if c.outputs] == [], "labs are released without outputs"
    assert all(c.execution_count is None for c in code), "labs are released unexecuted"
    exercises, checks = lab.exercises(), lab.checks()
    assert exercises and checks
    assert tuple(cell_key(c) for _, c in exercises) == chapter.exercises, \
        "the lab's exercises, in order, must be the ones course/chapters.py lists"
    for _, cell in exercises:
        assert callable(getattr(module, cell_key(cell), None)), \
            f"exercise {cell_key(cell)!r} has no function in {lab.solution_module}"
        assert "NotImplementedError" in cell.source, "an exercise cell holds a stub"
    keys = [cell_key(c) for _, c in checks]
    assert all(keys) and len(keys) == len(set(keys)), "every check needs its own stable key"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_lessons_are_executed_and_carry_no_lab_cells(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code), "run the lesson to store its outputs"
    assert not any(cell_kind(c) for c in nb.cells), "exercise/check cells belong in labs"


def solution_imports(source: str) -> set[str]:
    """The `solutions.<topic>` modules a cell imports."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        found.update(".".join(n.split(".")[:2]) for n in names if n.split(".")[0] == "solutions")
    return found


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_every_lab_is_graded_in_the_worker_and_sets_up_without_its_own_answers(path):
    """Every lab says `"worker": true`: its student cells never run in the judge's kernel. It
    runs its set-up cells in the worker (all but those tagged checks-only), where the only
    answers are the earlier chapters' it lists in `earlier_answers`: a set-up cell importing
    any other answer (its own above all) would fail for every student."""
    lab = load_lab(path)
    assert lab.in_worker, "a released lab is graded in the worker: set metadata.course.worker to true"
    setup = [c for c in lab.notebook.cells
             if c.cell_type == "code" and cell_kind(c) is None and not checks_only(c)]
    imported = set().union(*(solution_imports(c.source) for c in setup))
    assert imported <= set(lab.earlier_answers), \
        f"set-up cells import {sorted(imported - set(lab.earlier_answers))}, not given to the worker"
    own = ".".join(lab.solution_module.split(".")[:2])
    assert own not in answer_modules(lab.earlier_answers), \
        f"the earlier answers {lab.earlier_answers} would give the worker the lab's own {own}"


def test_the_set_up_import_rule_can_fail():
    assert solution_imports("from solutions.compaction.summaries import x\nimport solutions.gssc") == \
        {"solutions.compaction", "solutions.gssc"}


# ------------------------------------------------------------------ what the registry owns
def tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def test_every_file_in_a_chapter_folder_belongs_to_one_chapter():
    assert chapters.unowned_files(tracked_files()) == []


def test_parts_in_progress_exist_and_no_registered_chapter_owns_them():
    files = tracked_files()
    for chapter, parts in chapters.IN_PROGRESS.items():
        for pattern in parts:
            found = [p for p in files if chapters.matches(p, (pattern,))]
            assert found, f"{chapter}: {pattern} matches no file (drop it from IN_PROGRESS)"
            owned = [p for p in found if chapters.owner(p)]
            assert owned == [], f"{chapter}: the registry owns {owned} now: drop them from IN_PROGRESS"


def test_the_ownership_check_can_fail(monkeypatch):
    twice = chapters.Chapter("99", "twice", "Twice", "x", "x", parts=("lesson_support/widgets/tokens.py",))
    monkeypatch.setattr(chapters, "CHAPTERS", CHAPTERS + (twice,))
    assert chapters.unowned_files(["lesson_support/nobody.py", "lesson_support/widgets/tokens.py",
                                   "course/llm/model.py", "solutions/__init__.py"]) == [
        "lesson_support/nobody.py: no chapter", "lesson_support/widgets/tokens.py: chapters 02, 99"]


@pytest.mark.parametrize("chapter", WITH_LAB, ids=lambda c: c.number)
def test_self_test_checks_are_the_registry_questions(chapter):
    """The lab asks the registry's questions (`**qK.**` in its Markdown), its check cells are
    generated from them, and each digest is the digest of the reference answer."""
    from course.checks import answer_digest

    lab = load_lab(REPO_ROOT / chapter.lab)
    markdown = "".join(c.source for c in lab.notebook.cells if c.cell_type == "markdown")
    assert re.findall(r"\*\*(q\d+)\.\*\*", markdown) == [q.key for q in chapter.self_test]
    cells = [c for _, c in lab.checks() if cell_key(c).startswith("check-self-test-")]
    assert [c.source for c in cells] == [chapters.self_test_check(q) for q in chapter.self_test], \
        "run `python -m course.chapters --write-labs`"
    reference = importlib.import_module(chapter.solution_module).self_test()
    assert {q.key: q.digest for q in chapter.self_test} == \
        {key: answer_digest(value) for key, value in reference.items()}


def test_a_changed_question_is_written_into_the_lab_and_reported_until_then(monkeypatch):
    chapter = WITH_LAB[0]
    first = chapter.self_test[0]
    changed = chapters.Question(first.key, "0" * 64, "section 9, 'Nowhere'")
    edited = dataclasses.replace(chapter, self_test=(changed, *chapter.self_test[1:]))
    monkeypatch.setattr(chapters, "CHAPTERS", tuple(edited if c is chapter else c for c in CHAPTERS))
    assert any("self-test check cells are not the registry's questions" in p for p in chapters.problems())
    nb = chapters.with_self_test_checks(edited, json.loads((REPO_ROOT / chapter.lab).read_text(encoding="utf-8")))
    source = "".join(chapters.self_test_cells(nb)[0]["source"])
    assert '== "' + "0" * 64 + '"' in source and "re-read section 9, 'Nowhere', then try again" in source


def names_chapter(chapter, text: str) -> bool:
    """Does a file name the chapter: its file stem, its answers' module, or a `## NN ` heading?"""
    stem = f"{chapter.number}_{chapter.slug}"
    module = chapter.solution_module or stem
    return (stem in text or module in text or module.replace(".", "/") in text
            or re.search(rf"^## {chapter.number} ", text, flags=re.M) is not None)


def outside_files(chapter) -> set[str]:
    found = set()
    for path in tracked_files():
        if chapter.owns(path):
            continue
        try:
            text = (REPO_ROOT / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if names_chapter(chapter, text):
            found.add(path)
    return found


def test_adding_a_chapter_touches_what_authoring_says():
    """Measured on the latest chapter: the files outside its own that name it are the shared
    files edited by hand and those regenerated, no more; AUTHORING.md gives both counts."""
    latest = CHAPTERS[-1]
    assert outside_files(latest) == set(chapters.HAND_EDITED) | set(chapters.REGENERATED)
    authoring = (REPO_ROOT / "AUTHORING.md").read_text(encoding="utf-8")
    said = re.search(r"edits (\w+) shared files by hand \(([^)]*)\) and regenerates (\w+) \(([^)]*)\)",
                     " ".join(authoring.split()))
    assert said, "AUTHORING.md must say what adding a chapter touches outside the chapter's own files"
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
    assert words[said.group(1)] == len(chapters.HAND_EDITED)
    assert set(re.findall(r"`([^`]+)`", said.group(2))) == set(chapters.HAND_EDITED)
    assert words[said.group(3)] == len(chapters.REGENERATED)
    assert set(re.findall(r"`([^`]+)`", said.group(4))) == set(chapters.REGENERATED)


def test_the_measure_sees_a_file_that_lists_chapters():
    latest = CHAPTERS[-1]
    assert names_chapter(latest, f"- {latest.lesson}") and names_chapter(latest, f"## {latest.number} Title")
    assert not names_chapter(latest, "chapter numbers, none in particular")
