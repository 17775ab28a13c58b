"""Answer keys for grading through nbval: the released lab with the passing verdict stored under
each check (`answer_key`), and the graded copies nbval runs against it, for a student's
exercises, the reference solution or the released stubs (`nbval_graded`, `nbval_solved`,
`nbval_unsolved`)."""
from __future__ import annotations

import ast
import copy

import nbformat

from course.checks import parse_check_cell
from course.labs.lab import Lab, cell_key, cell_kind
from course.labs.variants import graded

VERDICT_LINE = "✓ {key}\n"


def answer_key(lab: Lab) -> nbformat.NotebookNode:
    """The lab's answer key: the released lab with the passing verdict, `✓ check-key`, stored
    as each check cell's output, and every other cell marked so nbval ignores its output.

    Built from the release, never edited: a passing verdict is the same text every run, and the
    test suite proves the reference solution reproduces every one of them through nbval
    (`tests/labs/test_nbval_grading.py`).
    """
    nb = copy.deepcopy(lab.notebook)
    count = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        count += 1
        cell.execution_count = count
        cell.outputs = []
        if cell_kind(cell) == "check":
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout",
                                                   text=VERDICT_LINE.format(key=cell_key(cell)))]
        else:
            tags = cell.metadata.setdefault("tags", [])
            if "nbval-ignore-output" not in tags:
                tags.append("nbval-ignore-output")
    nb.metadata.setdefault("course", {})["answer_key"] = True
    return nb


def nbval_check_source(source: str) -> str:
    """A check cell as nbval grades it: the released block's asserts, run bare (the `with
    check(...)` line becomes `try:`, so no verdict machinery is involved), whatever they print or
    display captured, then the passing verdict. The cell prints `✓ check-key` only if every
    assert held; otherwise it ends in the assert's error. `finally` cannot swallow it."""
    parsed = parse_check_cell(source)
    tree = ast.parse(source)
    body_start = tree.body[0].body[0].lineno
    lines = source.splitlines()
    body = "\n".join(lines[body_start - 1:tree.body[0].body[-1].end_lineno])
    return (f"# {parsed.key}: the released check, run bare by the grader (its asserts, then the verdict)\n"
            "_course_capture = __import__('IPython.utils.capture', fromlist=['capture_output']).capture_output()\n"
            "_course_capture.__enter__()\n"
            "try:\n"
            f"{body}\n"
            "finally:\n"
            "    _course_capture.__exit__(None, None, None)\n"
            f"print({VERDICT_LINE.format(key=parsed.key).rstrip()!r})")


def nbval_notebook(released: Lab, exercises: dict[str, str], graded_as: dict) -> nbformat.NotebookNode:
    """The answer key with `exercises` (key -> source) in its exercise cells and its check cells
    run bare (`nbval_check_source`), each keeping its hint for the course's pytest plugin.
    `graded_as` (student, notebook) goes into the metadata: it makes the plugin report."""
    nb = answer_key(released)
    for cell in nb.cells:
        kind = cell_kind(cell)
        if kind == "exercise" and cell_key(cell) in exercises:
            cell.source = exercises[cell_key(cell)]
        elif kind == "check":
            hint = parse_check_cell(cell.source).hint
            cell.source = nbval_check_source(cell.source)
            cell.metadata.setdefault("course", {})["hint"] = hint
        elif kind == "tally":
            cell.source = "# The tally: when grading, the gradebook is the tally."
    nb.metadata["course"].update(graded=dict(graded_as), answer_key=False)
    return nb


def nbval_graded(released: Lab, student: nbformat.NotebookNode, student_name: str = "",
                 notebook: str = "") -> tuple[nbformat.NotebookNode, list[str]]:
    """The graded copy nbval runs: the answer key with the student's exercise cells put in.

    Like `graded`: every other cell comes from the release (checks restored), and an exercise
    that imports the reference solutions, or is missing, is the stub.
    """
    answers, notes = graded(released, student)
    exercises = {cell_key(c): c.source for c in answers.cells if cell_kind(c) == "exercise"}
    return nbval_notebook(released, exercises, {"student": student_name, "notebook": notebook}), notes


def nbval_solved(lab: Lab) -> nbformat.NotebookNode:
    """The graded copy of the reference solution: every check cell must reproduce the key."""
    return nbval_notebook(lab, {cell_key(c): f"from {lab.solution_module} import {cell_key(c)}"
                                for _, c in lab.exercises()},
                          {"student": "(reference solution)", "notebook": lab.path.name})


def nbval_unsolved(lab: Lab) -> nbformat.NotebookNode:
    """The graded copy of the released stubs: every check cell must fail against the key."""
    return nbval_notebook(lab, {}, {"student": "(released stubs)", "notebook": lab.path.name})
