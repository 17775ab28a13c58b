"""Answer keys for grading through nbval: the released lab with the passing verdict stored under
each check (`answer_key`), and the graded copies nbval runs against it, for a student's
exercises, the reference solution or the released stubs (`nbval_graded`, `nbval_solved`,
`nbval_unsolved`).

A graded copy runs no student code in its own kernel: its exercise cells bind names to a worker
(`course.labs.remote`) that runs the lab's set-up and the exercises from a `Program`, confined,
written beside the copy by `write_graded`."""
from __future__ import annotations

import ast
import copy
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course.checks import parse_check_cell
from course.compiled_answers import guard_cell
from course.labs.lab import Lab, cell_key, cell_kind, checks_only, defined_names
from course.labs.variants import graded_exercises

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


PROGRAM_SUFFIX = ".worker.json"   # beside a graded copy NN_x_lab.ipynb: NN_x_lab.worker.json
SCRATCH_SUFFIX = ".scratch"       # and its worker's scratch folder, NN_x_lab.scratch/


@dataclass
class Program:
    """What the worker runs: the lab's set-up cells and the exercises, in the lab's order."""
    cells: list[dict] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)  # reference modules the worker may read:
    # the earlier chapters' answers the lab gives, or every answer for the solved lab's own runs


def _bind_source(key: str, names: list[str], first: bool, program_file: str) -> str:
    start = ("# The grader: a worker process, confined, runs the lab's set-up and your exercise cells;\n"
             "# the checks below call your functions there and never run your code here.\n"
             f"_course_worker = __import__('course.labs.remote', fromlist=['start']).start({program_file!r})\n"
             if first else "")
    return start + f"_course_worker.bind(globals(), {key!r}, {names!r})"


def nbval_notebook(released: Lab, exercises: dict[str, str], graded_as: dict,
                   solutions_visible: bool = False) -> tuple[nbformat.NotebookNode, Program | None]:
    """The answer key with its exercise cells bound to a worker that runs `exercises` (key ->
    source; a missing key runs the released stub) and its check cells run bare
    (`nbval_check_source`), each keeping its hint for the course's pytest plugin; and the
    worker's program (None for a lab whose metadata does not say `worker`: its exercise cells
    are put in the copy and run in the judge's kernel). `graded_as` (student, notebook) goes into the metadata: it makes the
    plugin report."""
    nb = answer_key(released)
    answers = ["solutions"] if solutions_visible else list(released.earlier_answers)
    program = Program(answers=answers) if released.in_worker else None
    if program is not None and not solutions_visible:  # the answers' compiled code: refused
        program.cells.append(guard_cell(tuple(answers)))
    first = True
    for cell in nb.cells:
        kind = cell_kind(cell)
        if cell.cell_type != "code" or kind in ("check", "tally"):
            pass
        elif program is None:  # a lab not yet moved to the worker: its exercises run here
            if kind == "exercise" and cell_key(cell) in exercises:
                cell.source = exercises[cell_key(cell)]
        elif kind == "exercise":
            key = cell_key(cell)
            program.cells.append({"kind": "exercise", "key": key, "source": exercises.get(key, cell.source)})
            cell.source = _bind_source(key, defined_names(cell.source), first,
                                       released.lab_id + PROGRAM_SUFFIX)
            first = False
        elif not checks_only(cell):
            program.cells.append({"kind": "setup", "key": None, "source": cell.source})
        if kind == "check":
            hint = parse_check_cell(cell.source).hint
            cell.source = nbval_check_source(cell.source)
            cell.metadata.setdefault("course", {})["hint"] = hint
        elif kind == "tally":
            cell.source = "# The tally: when grading, the gradebook is the tally."
    nb.metadata["course"].update(graded=dict(graded_as), answer_key=False)
    return nb, program


def nbval_graded(released: Lab, student: nbformat.NotebookNode, student_name: str = "",
                 notebook: str = "") -> tuple[nbformat.NotebookNode, Program, list[str]]:
    """The graded copy nbval runs, its worker's program with the student's exercise cells, and
    notes (`graded_exercises`): every other cell comes from the release (checks restored), and
    an exercise that imports the reference solutions, or is missing, is the stub.
    """
    exercises, notes = graded_exercises(released, student)
    nb, program = nbval_notebook(released, exercises, {"student": student_name, "notebook": notebook})
    return nb, program, notes


def nbval_solved(lab: Lab) -> tuple[nbformat.NotebookNode, Program]:
    """The graded copy of the reference solution: every check cell must reproduce the key."""
    return nbval_notebook(lab, {cell_key(c): f"from {lab.solution_module} import {cell_key(c)}"
                                for _, c in lab.exercises()},
                          {"student": "(reference solution)", "notebook": lab.path.name},
                          solutions_visible=True)


def nbval_unsolved(lab: Lab) -> tuple[nbformat.NotebookNode, Program]:
    """The graded copy of the released stubs: every check cell must fail against the key."""
    return nbval_notebook(lab, {}, {"student": "(released stubs)", "notebook": lab.path.name})


def write_graded(path: Path, nb: nbformat.NotebookNode, program: Program | None, *, timeout: float,
                 confined: bool = True) -> Path:
    """Write a graded copy at `path` (named after its lab), its worker's program and an empty
    scratch folder beside it; the copy's folder is the judge kernel's working folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    if program is None:
        return path
    scratch = path.parent / (path.stem + SCRATCH_SUFFIX)
    scratch.mkdir(exist_ok=True)
    data = {"cells": program.cells, "answers": program.answers,
            "timeout": timeout, "confined": confined, "scratch": scratch.name}
    program_path(path).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def program_path(graded_copy: Path) -> Path:
    """Where a graded copy's worker program is (it names the copy's lab: `NN_x_lab.ipynb`)."""
    return graded_copy.parent / (graded_copy.stem + PROGRAM_SUFFIX)
