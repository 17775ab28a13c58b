"""Run labs three ways: solved, unsolved, and graded.

A lab is a notebook (`labs/NN_slug_lab.ipynb`) whose metadata names it and its solution
module, with tagged cells (see AUTHORING.md, Labs):

- `exercise` cells hold stubs; `metadata.course.key` names the function they define;
- `check` cells are one `with check("check-key", hint="..."):` block of asserts
  (`course.checks`); `metadata.course.key` is the same key, `points` optional;
- a `tally` cell (the last) prints "K of N checks pass".

    solved    every exercise cell replaced by an import from the solution module; every
              check's verdict must pass and no cell may end in an error
    unsolved  the lab as released; every check's verdict must fail (a check that passes on
              the stubs cannot tell right from wrong), and no cell may end in an error
    grade     a student's copy: only the exercise cells are taken from it, everything else
              from the released lab; each check cell runs *bare* (its asserts without the
              verdict machinery) and passes only if it ends without an error and prints a
              one-time receipt; a per-cell timeout; scored by check

Solved and unsolved runs read the verdicts the student sees (`application/vnd.course.check+json`
outputs). A graded run never does: the student's code runs in the same kernel and could forge
them. It is judged from outside the kernel instead (`judge_bare_check`).
"""
from __future__ import annotations

import ast
import copy
import json
import os
import re
import secrets
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course.checks import MIME, CheckCellError, failure_message, parse_check_cell

LAB_NAME = re.compile(r"^\d\d_[a-z0-9_]+_lab\.ipynb$")
IMPORTS_SOLUTIONS = re.compile(r"^\s*(from|import)\s+solutions\b|__import__\(\s*['\"]solutions|"
                               r"importlib\.import_module\(\s*['\"]solutions", re.M)
LESSON_SUPPORT = "lesson_support"


def imports_answers(source: str) -> bool:
    """True when exercise code imports the reference solutions: from `solutions`, or through
    `lesson_support`, whose widgets and harnesses import answers (`from
    lesson_support.widgets.compaction import compact` is the reference `compact`). A name taken
    from lesson_support counts when it is defined in `solutions`; importing a lesson_support
    module whole counts when the module holds anything from `solutions`."""
    if IMPORTS_SOLUTIONS.search(source):
        return True
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == LESSON_SUPPORT:
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names if a.name.split(".")[0] == LESSON_SUPPORT]
            if any(_holds_answers(m, None) for m in modules):
                return True
            continue
        else:
            continue
        if _holds_answers(node.module, names):
            return True
    return False


def _holds_answers(module_name: str, names) -> bool:
    import importlib  # the course's own lesson_support package, named by the student's code

    try:
        module = importlib.import_module(module_name)
    except Exception:  # a module that does not import gives the student nothing
        return False
    values = [getattr(module, n, None) for n in names if n != "*"] if names and "*" not in names \
        else list(vars(module).values())
    return any(str(getattr(v, "__module__", "") or getattr(v, "__name__", "")).split(".")[0] == "solutions"
               for v in values if v is not None)


# Names an answer has no reason to touch: the notebook's machinery, the verdicts, the call stack.
# Grading does not depend on them (see judge_bare_check); they are reported for a human to look.
MACHINERY = re.compile(r"\b(get_ipython|IPython|ipykernel|course\.checks|from course import checks|"
                       r"display_pub|input_transformers\w*|ast_transformers|set_custom_exc|"
                       r"showtraceback|settrace|setprofile|_getframe|f_lineno|f_back|"
                       r"sys\.modules|__builtins__|builtins|ctypes|gc\.get_referrers)\b")
TIMEOUT_ENAME = "CourseCellTimeout"
SETUP_TIMEOUT = 120  # at least this long for the lab's own cells (no student code of their own)
RECEIPT_PREFIX = "course-check-receipt-"


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


def cell_kind(cell) -> str | None:
    tags = cell.get("metadata", {}).get("tags", [])
    for kind in ("exercise", "check", "tally"):
        if kind in tags:
            return kind
    return None


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


# ------------------------------------------------------------------------ the one lab matcher
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


# ------------------------------------------------------------------------ notebook variants
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


def not_attempted(released: Lab, student: nbformat.NotebookNode) -> bool:
    """True when every exercise is the released stub, untouched (or missing)."""
    answers = student_answers(student)
    return all(_normalised(answers.get(cell_key(c), c.source)) == _normalised(c.source)
               for _, c in released.exercises())


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


# ------------------------------------------------------------------------ answer keys (nbval)
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


# ------------------------------------------------------------------------ running
@dataclass
class CellResult:
    index: int
    kind: str | None
    key: str | None
    status: str  # "passed", "failed", "timeout", "not run"
    error: str = ""  # for a check: what to fix (its verdict's message); else the exception
    points: int | float = 0  # what a check is worth
    error_type: str | None = None  # the exception's type name, when there was one

    @property
    def earned(self) -> int | float:
        return self.points if self.status == "passed" else 0


@dataclass
class LabRun:
    lab: Lab
    results: list[CellResult] = field(default_factory=list)

    def checks(self) -> list[CellResult]:
        return [r for r in self.results if r.kind == "check"]

    def cell_problems(self) -> list[str]:
        """Notes on non-check cells that did not run cleanly (they explain failing checks)."""
        return [cell_problem(r.kind, r.key, r.index, r.status, r.error) for r in self.results
                if r.status != "passed" and r.kind not in ("check", "tally")]

    def tally_text(self) -> str | None:
        return next((r.error for r in self.results if r.kind == "tally"), None)


NO_VERDICT = "the check did not run to its end (the cell was changed or cut short while it ran): no verdict"


def cell_problem(kind: str | None, key: str | None, index: int, status: str, error: str) -> str:
    """The gradebook's note on a set-up or exercise cell that did not run cleanly."""
    what = f"exercise {key!r}" if kind == "exercise" else f"set-up cell {index} (from the release)"
    status = {"timeout": "timed out", "fail": "failed"}.get(status, status)
    last = error.splitlines()[-1] if error else ""
    return f"{what} {status}: {last}; the checks after it may fail because of it"


def _error_output(cell) -> tuple[str, str] | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output.get("ename", "Error"), output.get("evalue", "")
    return None


def _error_of(cell, reply: dict | None) -> tuple[str, str] | None:
    """(type name, message) of the exception a cell ended in: the execute reply says, or, if
    there is no reply, an error output."""
    content = (reply or {}).get("content", {})
    if content.get("status") == "error":
        return content.get("ename") or "Error", content.get("evalue") or ""
    return _error_output(cell)


def _error_text(ename: str, evalue: str) -> str:
    return f"{ename}: {evalue}".strip().rstrip(":")


def _stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def verdict_of(cell) -> dict | None:
    """The last check verdict a cell displayed (student form), or None."""
    found = None
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if output.get("output_type") in ("display_data", "execute_result") and MIME in data:
            found = data[MIME]
    return found


def judge_bare_check(cell, reply: dict | None) -> tuple[str, str, str | None]:
    """(status, what to fix, exception type) for a check run bare (see `bare_check`).

    Decided from the kernel's execute reply and the receipt alone: whatever the student's code
    printed or displayed, or did to `course.checks`, `check` or IPython's display, it cannot
    turn an exception into a pass or print a receipt it never saw.
    """
    meta = cell.metadata.get("course", {})
    error = _error_of(cell, reply) or _error_output(cell)  # an error output alone fails too
    if error:
        return "failed", failure_message(error[0], error[1], meta.get("hint", "")), error[0]
    if meta.get("receipt") not in _stdout(cell).splitlines():
        return "failed", NO_VERDICT, None
    return "passed", "", None


def judge_verdict_check(cell, reply: dict | None) -> tuple[str, str, str | None]:
    """(status, what to fix, exception type) for a check as the student runs it."""
    error = _error_of(cell, reply)
    if error:  # the check cell itself broke (it must never)
        return "failed", f"the check cell ended in an error: {_error_text(*error)}", error[0]
    verdict = verdict_of(cell)
    if verdict is None:
        return "failed", "the check cell showed no verdict", None
    if verdict.get("key") != cell_key(cell):
        return "failed", f"the verdict is for {verdict.get('key')!r}, not {cell_key(cell)!r}", None
    if verdict.get("passed"):
        return "passed", "", None
    return "failed", verdict.get("message", ""), verdict.get("error")


def _kernel_config(socket_dir: str):
    """Kernels talk over local Unix sockets (IPC), not TCP: nothing leaves the machine, and
    ipykernel has no reason to warn about unencrypted TCP. Windows has no IPC transport."""
    from traitlets.config import Config

    config = Config()
    if os.name == "posix":
        config.KernelManager.transport = "ipc"
        config.KernelManager.ip = os.path.join(socket_dir, "kernel")
    return config


def _socket_dir() -> str:
    base = tempfile.gettempdir()
    if len(base) > 60 and os.path.isdir("/tmp"):  # Unix socket paths are limited to ~100 bytes
        base = "/tmp"
    return tempfile.mkdtemp(prefix="course-kernel-", dir=base)


def run(lab: Lab, nb: nbformat.NotebookNode, timeout: float = 120, cwd: Path | None = None) -> LabRun:
    """Execute every code cell in order, in one fresh kernel; never stop at an error.

    A cell running longer than `timeout` seconds is interrupted and counted as a timeout (the
    lab's own set-up cells get at least SETUP_TIMEOUT, so a slow machine does not cost a
    student every check); a dead kernel marks the cells after it as not run. Check cells are judged by their receipt
    when `graded` made them bare, else by the verdict they display.
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    nb = copy.deepcopy(nb)
    replies: dict[int, dict] = {}

    def cell_timeout(cell) -> float:
        return timeout if cell_kind(cell) in ("exercise", "check") else max(timeout, SETUP_TIMEOUT)

    socket_dir = _socket_dir()
    client = NotebookClient(
        nb, timeout_func=cell_timeout, allow_errors=True, interrupt_on_timeout=True,
        error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "interrupted", "traceback": []},
        on_cell_executed=lambda cell, cell_index, execute_reply: replies.__setitem__(cell_index, execute_reply),
        kernel_name="python3", config=_kernel_config(socket_dir), shutdown_kernel="immediate",
        resources={"metadata": {"path": str(cwd or lab.path.parent)}})
    outcome = LabRun(lab)
    dead = None
    try:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                kind, key = cell_kind(cell), cell_key(cell)
                points = cell_points(cell) if kind == "check" else 0
                if dead is not None:
                    outcome.results.append(CellResult(index, kind, key, "not run", dead, points))
                    continue
                try:
                    client.execute_cell(cell, index)
                except DeadKernelError:
                    dead = f"the kernel died in cell {index} (did the code exit or crash Python?)"
                    outcome.results.append(CellResult(index, kind, key, "failed", dead, points))
                    continue
                outcome.results.append(_result(index, kind, key, points, cell, replies.get(index),
                                               cell_timeout(cell)))
    finally:
        shutil.rmtree(socket_dir, ignore_errors=True)
    return outcome


def _result(index, kind, key, points, cell, reply, timeout) -> CellResult:
    content = (reply or {}).get("content", {})
    if content.get("ename") == TIMEOUT_ENAME:
        return CellResult(index, kind, key, "timeout",
                          f"Timeout: the cell ran longer than {timeout:g} s and was interrupted "
                          f"(an infinite loop?)", points, "Timeout")
    if kind == "check":
        judge = judge_bare_check if "receipt" in cell.metadata.get("course", {}) else judge_verdict_check
        status, message, error_type = judge(cell, reply)
        return CellResult(index, kind, key, status, message, points, error_type)
    if kind == "tally":
        return CellResult(index, kind, key, "failed" if _error_of(cell, reply) else "passed",
                          _stdout(cell).strip())
    error = _error_of(cell, reply)
    if error:
        return CellResult(index, kind, key, "failed", _error_text(*error), points, error[0])
    return CellResult(index, kind, key, "passed", "", points)


def run_solved(lab: Lab, timeout: float = 300) -> LabRun:
    return run(lab, solved(lab), timeout)


def run_unsolved(lab: Lab, timeout: float = 300) -> LabRun:
    return run(lab, lab.notebook, timeout)


def _tally_problems(outcome: LabRun) -> list[str]:
    checks = outcome.checks()
    passed = sum(r.status == "passed" for r in checks)
    text = outcome.tally_text()
    if text is None:
        return ["the lab has no tally cell (tagged `tally`, calling tally(lab_id)) at its end"]
    expected = f"{passed} of {len(checks)} checks pass"
    if not text.startswith(expected):
        return [f"the tally cell printed {text.splitlines()[0] if text else 'nothing'!r}, "
                f"expected {expected!r}"]
    return []


def solved_problems(outcome: LabRun) -> list[str]:
    """What is wrong with a solved run: every check passes, no cell ends in an error."""
    problems = [f"cell {r.index} ({r.kind or 'code'} {r.key or ''}) {r.status}: {r.error}".replace("  ", " ")
                for r in outcome.results if r.status != "passed"]
    return problems + _tally_problems(outcome)


def unsolved_problems(outcome: LabRun) -> list[str]:
    """What is wrong with an unsolved run: checks fail (each for its own reason), every other
    cell passes, and Run All reaches the tally."""
    problems = []
    for r in outcome.results:
        if r.kind == "check" and r.status == "passed":
            problems.append(f"check {r.key!r} (cell {r.index}) passed on the unsolved stubs: it "
                            f"cannot tell a solved lab from an unsolved one")
        elif r.kind == "check" and r.error_type == "NameError":
            problems.append(f"check {r.key!r} (cell {r.index}) failed with a NameError on the "
                            f"stubs: it uses a variable it does not define ({r.error.splitlines()[-1]}); "
                            f"a check may only use what set-up and exercise cells define")
        elif r.kind == "check" and r.error.startswith(("the check cell", "the verdict is for")):
            problems.append(f"check {r.key!r} (cell {r.index}): {r.error}")
        elif r.kind != "check" and r.status != "passed":
            problems.append(f"cell {r.index} ({r.kind or 'code'}) must run on the unsolved lab "
                            f"but {r.status}: {r.error}")
    if not outcome.checks():
        problems.append("the lab has no check cells")
    return problems + _tally_problems(outcome)
