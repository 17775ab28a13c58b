"""Reflections: a student's answers to a lesson's "Things to think about", for the instructor.

A lesson that ends with a "## Things to think about" list has one Markdown cell per question
after it, tagged `answer`, with `metadata.course.key` = "think-N" and a placeholder
("*Your answer to question N here.*"). Nothing checks these answers: `course.grade` collects
their text from a student's copy of the lesson into the gradebook, for the instructor to read
(see INSTRUCTORS.md), and marks a cell still holding its placeholder, or missing, as not
answered.
"""
from __future__ import annotations

import re
from pathlib import Path

ANSWER_TAG = "answer"
HEADING = "## Things to think about"
PLACEHOLDER = re.compile(r"^\W*your answer( to question \d+)? here\W*$", re.I)
ANSWERED, NOT_ANSWERED = "reflection", "not answered"


def is_answer_cell(cell) -> bool:
    return cell.get("cell_type") == "markdown" and ANSWER_TAG in cell.get("metadata", {}).get("tags", [])


def answer_key(cell) -> str | None:
    """The cell's answer key ("think-1"); None when it has none, or one that is not text (a
    student's copy can hold anything: such a cell is not an answer)."""
    course = cell.get("metadata", {}).get("course")
    key = course.get("key") if isinstance(course, dict) else None
    return key if isinstance(key, str) else None


def questions(nb) -> dict[str, str]:
    """The numbered questions of the lesson's "Things to think about" section, by answer key
    ("think-1": "The second request repeats ..."), in order; {} if it has none."""
    for cell in nb.cells:
        if cell.get("cell_type") == "markdown" and HEADING in cell.source:
            section = cell.source.split(HEADING, 1)[1]
            section = re.split(r"\n\*\*Lab:\*\*|\n#{1,3} ", section)[0]
            found, current = {}, None
            for line in section.splitlines():
                item = re.match(r"^(\d+)\.\s+(.*)", line)
                if item:
                    current = f"think-{item.group(1)}"
                    found[current] = item.group(2).strip()
                elif current and line.strip():
                    found[current] += " " + line.strip()
                else:
                    current = None
            return found
    return {}


def _text(cell) -> str:
    text = cell.get("source", "")
    return ("".join(text) if isinstance(text, list) else text).strip()


def answer_text(cell, placeholders: frozenset[str] = frozenset()) -> str:
    """The student's text, or "" while the cell is empty or still a placeholder (the English
    one, or the released cell's text in `placeholders`: the Chinese edition's)."""
    text = _text(cell)
    return "" if not text or PLACEHOLDER.match(text) or text in placeholders else text


def collect(released, student, editions=()) -> tuple[list[dict], list[str]]:
    """One row per question of the released lesson ({"key", "question", "status", "answer"}),
    in order, and notes (an answer cell missing from the student's copy, or a lesson that asks
    nothing). Answer cells the released lesson does not have are kept too, after the others.
    `editions` are the lesson's other released editions (the Chinese one): a cell still holding
    one of their placeholders is not answered either."""
    asked = questions(released) if released is not None else {}
    placeholders = {}
    for edition in [released, *editions]:
        for cell in (edition.cells if edition is not None else []):
            if is_answer_cell(cell) and answer_key(cell):
                placeholders.setdefault(answer_key(cell), set()).add(_text(cell))
    released_keys = [answer_key(c) for c in (released.cells if released is not None else [])
                     if is_answer_cell(c) and answer_key(c)]
    keys = list(dict.fromkeys(released_keys + [k for k in asked if k not in released_keys]))
    theirs = {}
    for cell in student.cells:
        if is_answer_cell(cell) and answer_key(cell):
            theirs.setdefault(answer_key(cell), cell)
    keys += [k for k in theirs if k not in keys]
    rows, notes = [], []
    for key in keys:
        cell = theirs.get(key)
        if cell is None:
            notes.append(f"the answer cell for {key} is missing from this copy: not answered")
        text = answer_text(cell, frozenset(placeholders.get(key, ()))) if cell is not None else ""
        rows.append({"key": key, "question": asked.get(key, ""),
                     "status": ANSWERED if text else NOT_ANSWERED, "answer": text})
    if not keys:
        notes.append("this lesson has no questions to answer (no `answer` cells)")
    return rows, notes


def find_released_lessons(lessons_dir: Path) -> dict[str, Path]:
    """Released lessons by file name ("01_agent_loop.ipynb" -> its path)."""
    return {p.name: p for p in sorted(Path(lessons_dir).glob("[0-9][0-9]_*.ipynb"))
            if not p.name.endswith("_lab.ipynb")}
