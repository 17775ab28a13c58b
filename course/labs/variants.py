"""What of a lab is run: `solved` (every exercise imported from the solution module),
`graded_exercises` (the student's exercise cells a grader takes, and notes on what it did not
take), and `not_attempted`, for a copy whose exercises are all the released stubs."""
from __future__ import annotations

import copy

import nbformat

from course.labs.lab import Lab, cell_key, cell_kind
from course.labs.screening import MACHINERY, checks_only_names, imports_answers


def solved(lab: Lab) -> nbformat.NotebookNode:
    """The lab with every exercise replaced by the reference solution."""
    nb = copy.deepcopy(lab.notebook)
    for cell in nb.cells:
        if cell_kind(cell) == "exercise":
            cell.source = f"from {lab.solution_module} import {cell_key(cell)}"
    return nb


def _normalised(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.replace("\r\n", "\n").strip().splitlines())


def student_answers(student: nbformat.NotebookNode) -> dict[str, str]:
    """The student's exercise cells by key (the first cell with a key wins)."""
    answers = {}
    for cell in student.cells:
        if cell.get("cell_type") == "code" and cell_kind(cell) == "exercise" and cell_key(cell):
            answers.setdefault(cell_key(cell), cell.source)
    return answers


def exercises_worked(released: Lab, student: nbformat.NotebookNode) -> int:
    """How many exercises differ from the released stub (a missing one does not)."""
    answers = student_answers(student)
    return sum(_normalised(answers.get(cell_key(c), c.source)) != _normalised(c.source)
               for _, c in released.exercises())


def not_attempted(released: Lab, student: nbformat.NotebookNode) -> bool:
    """True when every exercise is the released stub, untouched (or missing)."""
    return exercises_worked(released, student) == 0


def graded_exercises(released: Lab, student: nbformat.NotebookNode) -> tuple[dict[str, str], list[str]]:
    """The exercise sources to grade, by key, and notes on what was missing or odd.

    Only exercise cells are taken from the student (every other cell comes from the release,
    so a deleted or weakened check is back, and so is a set-up cell the student broke). A
    missing exercise, or one that imports the reference solutions, is left out: the released
    stub is graded in its place.
    """
    answers = student_answers(student)
    taken, notes = {}, []
    for _, cell in released.exercises():
        key = cell_key(cell)
        if key not in answers:
            notes.append(f"exercise {key!r} not found in the submission: the stub was graded")
        elif imports_answers(answers[key]):
            notes.append(f"exercise {key!r} imports the reference solutions: the stub was graded")
        else:
            taken[key] = answers[key]
            touched = sorted(set(MACHINERY.findall(answers[key])))
            if touched:
                notes.append(f"exercise {key!r} reaches into the notebook's machinery "
                             f"({', '.join(touched)}): graded as usual, worth a look")
            borrowed = checks_only_names(released, answers[key]) if released.in_worker else []
            if borrowed:
                notes.append(f"exercise {key!r} reads {', '.join(borrowed)}, which only the "
                             f"checks' set-up defines: graded where those names do not exist")
    return taken, notes
