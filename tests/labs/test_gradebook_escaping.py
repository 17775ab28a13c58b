"""What a student controls in the gradebook is escaped and capped (issue 47, items 9 and 10).

A student controls their folder's or file's name, the notebook's metadata (its edition), what
their code returns and raises (the checks quote it in their messages) and their reflections,
answer keys included. One class of the tiny lab, graded once (its exercises in a worker,
`--unconfined`: none of this attacks the sandbox), tries each against gradebook.md (a forged
heading and table row, raw HTML, terminal escapes), gradebook.csv (spreadsheet formulas, a field
too large for Python's csv module) and the feedback files; an honest student, ada, is graded
beside them.
"""
from __future__ import annotations

import csv
import json
import re

import nbformat
import pytest

from tests.labs.conftest import SOLVED, TINY_LAB
from tests.labs.test_grading import grade_here, hand_in, tiny_lesson, worker_class

FORGED_ROW = "| ada | 0 / 3 | 0 / 3 |"
FORGERY = f"\n\n# Forged heading\n\n{FORGED_ROW}\n\n<img src=x onerror=alert(1)>\n"
RAISES = ("def add(a, b):\n"
          f"    raise ValueError({FORGERY!r} + '\\r✓ check-add-pair \\x1b[8mhidden')\n")
HUGE = "def add(a, b):\n    return 'x' * (8 * 2**20)\n"
FORMULA = "=HYPERLINK(\"https:example.com\",\"click\")"  # a folder name: no slash


@pytest.fixture(scope="module")
def escaped_class(tmp_path_factory):
    base = tmp_path_factory.mktemp("escaping")
    labs, subs = worker_class(base)
    lessons = base / "lessons"
    lessons.mkdir()
    nbformat.write(tiny_lesson(), lessons / "00_tiny.ipynb")
    nbformat.write(hand_in(labs, SOLVED), subs / "ada.ipynb")
    edition = hand_in(labs, SOLVED)
    edition.metadata["course"]["language"] = "zh-CN" + FORGERY
    nbformat.write(edition, subs / "lang.ipynb")
    nbformat.write(hand_in(labs, {**SOLVED, "add": RAISES}), subs / "raiser.ipynb")
    nbformat.write(hand_in(labs, {**SOLVED, "add": HUGE}), subs / "huge.ipynb")
    (subs / FORMULA).mkdir()
    nbformat.write(hand_in(labs, SOLVED), subs / FORMULA / f"{TINY_LAB}.ipynb")
    (subs / "rita").mkdir()
    lesson = tiny_lesson()
    lesson.cells[4].source = "=1+2" + FORGERY + "</details>"
    lesson.cells[5].metadata["course"]["key"] = "think-2" + FORGERY
    lesson.cells.append(nbformat.v4.new_markdown_cell("my answer", metadata={
        "tags": ["answer"], "course": {"key": {"not": "a string"}}}))
    nbformat.write(lesson, subs / "rita" / "00_tiny.ipynb")
    out = base / "out"
    grade_here(subs, "--labs", labs, "--lessons", lessons, "--timeout", "30", "--jobs", "1",
               "--unconfined", "--output", out)
    return out


def read(out, name) -> str:
    return (out / name).read_text(encoding="utf-8")


def test_the_honest_student_is_graded_as_usual(escaped_class):
    rows = list(csv.DictReader(read(escaped_class, "gradebook.csv").splitlines()))
    assert sum(int(r["earned"]) for r in rows if r["student"] == "ada") == 3
    assert "| ada | 3 / 3 | 3 / 3 |" in read(escaped_class, "gradebook.md")


@pytest.mark.parametrize("name", ["gradebook.md", "feedback/lang.md", "feedback/raiser.md", "feedback/rita.md"])
def test_no_student_forges_a_heading_a_row_or_html_in_markdown(escaped_class, name):
    text = read(escaped_class, name)
    lines = text.splitlines()
    assert not [line for line in lines if "Forged heading" in line and line.lstrip().startswith("#")]
    assert FORGED_ROW not in lines and not [line for line in lines if line.startswith("| ada | 0")]
    assert not re.search(r"(?<!\\)<", text), "HTML, unescaped"
    assert "\x1b" not in text and "\r" not in text


def test_the_forgeries_are_still_there_to_read_escaped(escaped_class):
    text = read(escaped_class, "gradebook.md")
    assert "\\<img src=x onerror=alert(1)\\>" in text  # shown, not rendered
    assert "\\x0d✓ check-add-pair" in text and "8mhidden" in text  # the carriage return spelt out


def test_spreadsheet_formulas_are_neutralised_in_the_csv(escaped_class):
    rows = list(csv.DictReader(read(escaped_class, "gradebook.csv").splitlines()))
    assert {r["student"] for r in rows} >= {"'" + FORMULA}
    rita = {r["check"]: r["detail"] for r in rows if r["student"] == "rita"}
    assert rita["think-1"].startswith("'=1+2")
    for row in rows:
        for value in row.values():
            assert not value or value[0] not in "=+-@\t\r", row


def test_every_detail_is_capped(escaped_class):
    for name in ("gradebook.csv", "gradebook.md", "gradebook.json", "feedback/huge.md"):
        assert (escaped_class / name).stat().st_size < 200_000, name
    rows = list(csv.DictReader(read(escaped_class, "gradebook.csv").splitlines()))  # the default limit
    huge = {r["check"]: r for r in rows if r["student"] == "huge"}
    assert huge["check-add-pair"]["status"] == "fail"
    assert "characters cut" in huge["check-add-pair"]["detail"]
    assert json.loads(read(escaped_class, "gradebook.json"))["format"]


def test_an_answer_key_that_is_not_a_string_is_not_an_answer(escaped_class):
    rows = list(csv.DictReader(read(escaped_class, "gradebook.csv").splitlines()))
    assert [r["check"] for r in rows if r["student"] == "rita"][:1] == ["think-1"]
    assert "my answer" not in read(escaped_class, "gradebook.md")


def test_the_graded_notebooks_show_the_students_text_inert(escaped_class):
    nb = nbformat.read(escaped_class / "graded-notebooks" / "raiser" / f"{TINY_LAB}.ipynb", as_version=4)
    shown = json.dumps([c.get("outputs", []) for c in nb.cells], ensure_ascii=False)
    assert "\\r✓" not in shown.replace("\\\\r", "") and "\\u001b" not in shown
    assert "text/html" not in shown and "text/markdown" not in shown
