"""The notebooks a lab is run as: `solved` (every exercise imported from the solution module)
and `graded` (a student's exercise cells in the released lab, each check run bare with a
one-time receipt, see `bare_check`); and `not_attempted`, for a copy whose exercises are all
the released stubs."""
from __future__ import annotations

import copy
import secrets

import nbformat

from course.checks import CheckCellError, parse_check_cell
from course.labs.lab import Lab, LabError, cell_key, cell_kind
from course.labs.screening import MACHINERY, checks_only_names, imports_answers

RECEIPT_PREFIX = "course-check-receipt-"


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


def graded(released: Lab, student: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, list[str]]:
    """The notebook the grader runs, and notes on what was missing or odd.

    Everything but the exercise cells comes from the released lab, so a deleted or weakened
    check is back, and so is a set-up cell the student broke. Each check cell becomes its bare
    body followed by a one-time receipt (`bare_check`); the tally cell is left out (the
    gradebook is the tally).
    """
    answers = student_answers(student)
    nb = copy.deepcopy(released.notebook)
    notes = []
    for cell in nb.cells:
        kind = cell_kind(cell)
        if kind == "exercise":
            key = cell_key(cell)
            if key not in answers:
                notes.append(f"exercise {key!r} not found in the submission: the stub was graded")
            elif imports_answers(answers[key]):
                notes.append(f"exercise {key!r} imports the reference solutions: the stub was graded")
            else:
                cell.source = answers[key]
                touched = sorted(set(MACHINERY.findall(answers[key])))
                if touched:
                    notes.append(f"exercise {key!r} reaches into the notebook's machinery "
                                 f"({', '.join(touched)}): graded as usual, worth a look")
                borrowed = checks_only_names(released, answers[key]) if released.in_worker else []
                if borrowed:
                    notes.append(f"exercise {key!r} reads {', '.join(borrowed)}, which only the "
                                 f"checks' set-up defines: graded where those names do not exist")
        elif kind == "check":
            bare_check(cell)
        elif kind == "tally":
            cell.source = "# The tally: when grading, the gradebook is the tally."
    return nb, notes


def bare_check(cell) -> None:
    """Turn a check cell into what the grader runs, in place.

    The cell becomes the check's asserts alone, with no verdict machinery (nothing the
    student's code could have replaced), then a print of a fresh random receipt. The check
    passes only when the cell ends without an error *and* the receipt was printed: blanking
    the cell, hiding its error or cutting it short all fail. The receipt, key and hint are
    kept in the cell's metadata in the grader's memory; the kernel never sees them.
    """
    try:
        parsed = parse_check_cell(cell.source)
    except CheckCellError as exc:
        raise LabError(f"check {cell_key(cell)!r} in the released lab: {exc}") from None
    receipt = RECEIPT_PREFIX + secrets.token_hex(16)
    cell.source = f"{parsed.body}\nprint({receipt!r})"
    cell.metadata.setdefault("course", {}).update(receipt=receipt, hint=parsed.hint)
