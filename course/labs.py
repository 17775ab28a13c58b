"""Run labs three ways: solved, unsolved, and graded.

A lab is a notebook (`labs/NN_slug_lab.ipynb`) whose metadata names it and its solution
module, with two kinds of tagged cells (see AUTHORING.md):

- `exercise` cells hold stubs; `metadata.course.key` names the function they define;
- `check` cells hold asserts; `metadata.course.key` is a stable key, `points` optional.

    solved    every exercise cell replaced by an import from the solution module;
              every cell must pass
    unsolved  the lab as released; every check must fail (a check that passes on the stubs
              cannot tell right from wrong)
    grade     a student's copy: only the exercise cells are taken from it, everything else
              (checks included) from the released lab; a per-cell timeout; scored by check
"""
from __future__ import annotations

import copy
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

LAB_NAME = re.compile(r"^\d\d_[a-z0-9_]+_lab\.ipynb$")
IMPORTS_SOLUTIONS = re.compile(r"^\s*(from|import)\s+solutions\b|__import__\(\s*['\"]solutions|"
                               r"importlib\.import_module\(\s*['\"]solutions", re.M)


class LabError(ValueError):
    """A notebook that cannot be run as a lab; the message says why."""


@dataclass
class Lab:
    path: Path
    notebook: nbformat.NotebookNode
    lab_id: str
    solution_module: str

    def cells(self, kind: str) -> list[tuple[int, nbformat.NotebookNode]]:
        return [(i, c) for i, c in enumerate(self.notebook.cells) if cell_kind(c) == kind]

    def checks(self) -> list[tuple[int, nbformat.NotebookNode]]:
        return self.cells("check")

    def exercises(self) -> list[tuple[int, nbformat.NotebookNode]]:
        return self.cells("exercise")


def cell_kind(cell) -> str | None:
    tags = cell.get("metadata", {}).get("tags", [])
    for kind in ("exercise", "check"):
        if kind in tags:
            return kind
    return None


def cell_key(cell) -> str | None:
    return cell.get("metadata", {}).get("course", {}).get("key")


def cell_points(cell) -> float:
    return float(cell.get("metadata", {}).get("course", {}).get("points", 1))


def read_notebook(path: Path) -> nbformat.NotebookNode:
    """Read a notebook, turning every way it can be broken into a LabError with a reason."""
    try:
        raw = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise LabError(f"cannot read {Path(path).name}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise LabError(f"{Path(path).name} is not a text file (not UTF-8): not a notebook") from None
    if not raw.strip():
        raise LabError(f"{Path(path).name} is empty")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise LabError(f"{Path(path).name} is not a valid .ipynb: broken JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise LabError(f"{Path(path).name} is JSON but not a notebook (no list of cells)")
    try:
        nb = nbformat.reads(raw, as_version=4)  # joins multi-line sources, upgrades old formats
        nbformat.validate(nb)
    except Exception as exc:  # nbformat raises several unrelated types
        raise LabError(f"{Path(path).name} is not a valid notebook: {str(exc).splitlines()[0]}") from None
    return nb


def load_lab(path) -> Lab:
    path = Path(path)
    nb = read_notebook(path)
    meta = nb.metadata.get("course", {})
    lab_id, module = meta.get("lab"), meta.get("solution_module")
    if not lab_id or not module:
        raise LabError(f"{path.name} has no lab metadata (course.lab and course.solution_module): "
                       f"it is not one of the course's labs")
    return Lab(path, nb, lab_id, module)


# ------------------------------------------------------------------------ notebook variants
def solved(lab: Lab) -> nbformat.NotebookNode:
    """The lab with every exercise replaced by the reference solution."""
    nb = copy.deepcopy(lab.notebook)
    for cell in nb.cells:
        if cell_kind(cell) == "exercise":
            cell.source = f"from {lab.solution_module} import {cell_key(cell)}"
    return nb


def graded(released: Lab, student: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, list[str]]:
    """The released lab with the student's exercise cells put in; notes on what was missing.

    Everything but the exercise cells comes from the released lab, so a deleted or weakened
    check is back, and so is a setup cell the student broke.
    """
    answers = {}
    for cell in student.cells:
        if cell.get("cell_type") == "code" and cell_kind(cell) == "exercise" and cell_key(cell):
            answers.setdefault(cell_key(cell), cell.source)
    nb = copy.deepcopy(released.notebook)
    notes = []
    for cell in nb.cells:
        if cell_kind(cell) == "exercise":
            key = cell_key(cell)
            if key not in answers:
                notes.append(f"exercise {key!r} not found in the submission: the stub was graded")
            elif IMPORTS_SOLUTIONS.search(answers[key]):
                notes.append(f"exercise {key!r} imports the reference solutions: the stub was graded")
            else:
                cell.source = answers[key]
    return nb, notes


# ------------------------------------------------------------------------ running
@dataclass
class CellResult:
    index: int
    kind: str | None
    key: str | None
    status: str  # "passed", "failed" (an exception), "timeout", "not run"
    error: str = ""
    points: float = 0.0  # what a check is worth

    @property
    def earned(self) -> float:
        return self.points if self.status == "passed" else 0.0


@dataclass
class LabRun:
    lab: Lab
    results: list[CellResult] = field(default_factory=list)

    def checks(self) -> list[CellResult]:
        return [r for r in self.results if r.kind == "check"]


def _error_text(cell) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            value = output.get("evalue", "")
            return f"{output.get('ename', 'Error')}: {value}".strip().rstrip(":")
    return None


def run(lab: Lab, nb: nbformat.NotebookNode, timeout: float = 120, cwd: Path | None = None) -> LabRun:
    """Execute every code cell in order, in one fresh kernel; never stop at an error.

    A cell running longer than `timeout` seconds is interrupted and counted as a timeout; a
    dead kernel marks the cells after it as not run.
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    nb = copy.deepcopy(nb)
    client = NotebookClient(
        nb, timeout=timeout, allow_errors=True, interrupt_on_timeout=True,
        error_on_timeout={"ename": "Timeout", "evalue": "interrupted", "traceback": []},
        kernel_name="python3", resources={"metadata": {"path": str(cwd or lab.path.parent)}})
    outcome = LabRun(lab)
    dead = None
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            kind, key = cell_kind(cell), cell_key(cell)
            points = cell_points(cell) if kind == "check" else 0.0
            if dead is not None:
                outcome.results.append(CellResult(index, kind, key, "not run", dead, points))
                continue
            started = time.monotonic()
            try:
                client.execute_cell(cell, index)
            except DeadKernelError:
                dead = f"the kernel died in cell {index} (did the code exit or crash Python?)"
                outcome.results.append(CellResult(index, kind, key, "failed", dead, points))
                continue
            error = _error_text(cell)
            if error is None:
                status = "passed"
            elif time.monotonic() - started >= timeout:  # interrupted by us, not failed by itself
                status, error = "timeout", (f"Timeout: the cell ran longer than {timeout:g} s and "
                                            f"was interrupted (an infinite loop?)")
            else:
                status = "failed"
            outcome.results.append(CellResult(index, kind, key, status, error or "", points))
    return outcome


def run_solved(lab: Lab, timeout: float = 300) -> LabRun:
    return run(lab, solved(lab), timeout)


def run_unsolved(lab: Lab, timeout: float = 300) -> LabRun:
    return run(lab, lab.notebook, timeout)


def solved_problems(outcome: LabRun) -> list[str]:
    """What is wrong with a solved run: every cell must pass."""
    return [f"cell {r.index} ({r.kind or 'code'} {r.key or ''}) {r.status}: {r.error}".replace("  ", " ")
            for r in outcome.results if r.status != "passed"]


def unsolved_problems(outcome: LabRun) -> list[str]:
    """What is wrong with an unsolved run: checks must fail, every other cell must pass."""
    problems = []
    for r in outcome.results:
        if r.kind == "check" and r.status == "passed":
            problems.append(f"check {r.key!r} (cell {r.index}) passed on the unsolved stubs: it "
                            f"cannot tell a solved lab from an unsolved one")
        elif r.kind != "check" and r.status != "passed":
            problems.append(f"cell {r.index} ({r.kind or 'code'}) must run on the unsolved lab "
                            f"but {r.status}: {r.error}")
    if not outcome.checks():
        problems.append("the lab has no check cells")
    return problems


def find_released_labs(labs_dir: Path) -> dict[str, Lab]:
    labs = {}
    for path in sorted(Path(labs_dir).glob("*_lab.ipynb")):
        lab = load_lab(path)
        labs[lab.lab_id] = lab
    return labs
