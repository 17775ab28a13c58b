"""What a lab is: the `Lab` record, its cells' tags and points, and reading a lab notebook
(a broken file becomes a `LabError` with its reason), finding the released labs and matching a
student's notebook to one of them."""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

LAB_NAME = re.compile(r"^\d\d_[a-z0-9_]+_lab\.ipynb$")


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

    def points(self) -> int | float:
        return sum(cell_points(c) for _, c in self.checks())

    @property
    def in_worker(self) -> bool:
        """Graded with the student's code in a confined worker (`course.labs.remote`): the lab's
        set-up cells run there without the answers (metadata `course.worker: true`). A lab not
        yet moved runs its graded copy's exercise cells in the judge's kernel, as before."""
        return bool(self.notebook.metadata.get("course", {}).get("worker"))

    @property
    def earlier_answers(self) -> tuple[str, ...]:
        """Earlier chapters' answers the lab gives the student as tools (metadata
        `course.earlier_answers`, e.g. ["solutions.compaction"] in a later chapter's lab): the
        only reference modules its worker can read. Never the lab's own solution module."""
        return tuple(self.notebook.metadata.get("course", {}).get("earlier_answers", ()))


def cell_kind(cell) -> str | None:
    tags = cell.get("metadata", {}).get("tags", [])
    for kind in ("exercise", "check", "tally"):
        if kind in tags:
            return kind
    return None


CHECKS_ONLY = "checks-only"  # a set-up cell's tag: what only the checks use (a harness, a model)


def checks_only(cell) -> bool:
    """A set-up cell the checks need and the exercises do not (tag `checks-only`): grading runs
    it beside the checks, never in the worker with the student's code, so it may import what
    the worker cannot read (lesson_support's harnesses, which use answers)."""
    return cell_kind(cell) is None and CHECKS_ONLY in cell.get("metadata", {}).get("tags", [])


def defined_names(source: str) -> list[str]:
    """The top-level names a cell defines (def, class, assignment, import), in order."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
    return list(dict.fromkeys(n for n in names if not n.startswith("_")))


def cell_key(cell) -> str | None:
    return cell.get("metadata", {}).get("course", {}).get("key")


def cell_points(cell) -> int | float:
    """What a check is worth (default 1): an int when whole, so 1 reads "1", not "1.0"."""
    return whole(cell.get("metadata", {}).get("course", {}).get("points", 1))


def whole(x) -> int | float:
    x = float(x)
    return int(x) if x.is_integer() else x


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


def find_released_labs(labs_dir: Path) -> dict[str, Lab]:
    labs = {}
    for path in sorted(Path(labs_dir).glob("*_lab.ipynb")):
        lab = load_lab(path)
        labs[lab.lab_id] = lab
    return labs


def match_lab(path: Path, nb: nbformat.NotebookNode, released: dict[str, Lab],
              only: str | None = None) -> Lab:
    """The released lab a student's notebook belongs to; LabError with the reason if none.

    The lab id in the notebook's metadata decides. When an editor stripped the metadata, the
    file name decides (`01_agent_loop_lab.ipynb`), and failing that the exercise keys in the
    cells' metadata, when they are exactly one released lab's. `only` (a lab id) refuses any
    other lab. Used by `course.grade` and by the pytest plugin's `--lab-mode=grade` alike.
    """
    name = Path(path).name
    lab_id = nb.metadata.get("course", {}).get("lab")
    if lab_id is None:  # metadata stripped by some editor: fall back to the file name
        lab_id = next((i for i, lab in released.items() if lab.path.name == name), None)
    if lab_id is None:  # ... then to the exercises it holds
        keys = {cell_key(c) for c in nb.cells if cell_kind(c) == "exercise" and cell_key(c)}
        matches = [i for i, lab in released.items()
                   if keys and keys == {cell_key(c) for _, c in lab.exercises()}]
        lab_id = matches[0] if len(matches) == 1 else None
    if lab_id not in released:
        raise LabError(f"{name} is not a notebook of any released lab "
                       f"(lab id {lab_id!r}; released: {', '.join(sorted(released)) or 'none'})")
    if only and lab_id != only:
        raise LabError(f"{name} is lab {lab_id}, not {only}: wrong lab submitted")
    return released[lab_id]
