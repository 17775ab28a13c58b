"""pytest options for labs (loaded by the repository's conftest.py).

    pytest --lab-mode=solved   labs/01_agent_loop_lab.ipynb   every cell must pass with the
                                                              reference solution injected
    pytest --lab-mode=unsolved labs/01_agent_loop_lab.ipynb   every check must fail on the stubs
    pytest --lab-mode=grade    path/to/student_copy.ipynb     graded as course.grade grades it
                                                              (the answer key under strict nbval,
                                                              the exercises in a confined worker);
                                                              one test per check
Options: --lab-timeout SECONDS (per cell, default 60), --labs-dir DIR (released labs, default the
course's labs/). A notebook is matched to its released lab by `course.labs.match_lab`, as
`course.grade` does, with the same fallback and the same messages.
Without --lab-mode, notebooks are lessons and nbval runs them as usual.

Graded copies (`course.labs.nbval_graded`, written by `course.grade` into its output folder) are
plain nbval notebooks: `pytest --nbval graded-notebooks/bob/01_agent_loop_lab.ipynb` passes a
check cell exactly when it prints the answer key's verdict, `✓ check-key`. (The copies
course.grade keeps show the gradebook's verdicts instead, for the student: under a check that
failed, `✗ check-key` and the reason, which no run prints, so it fails by hand too.) For such
notebooks this plugin adds what grading needs on top of strict nbval:

- a cell that ended in an error the notebook did not show (an exercise that hid tracebacks) still
  fails: the kernel's own execute reply is checked, not only the outputs;
- a timeout costs only the cell it hits (nbval would expect every later cell to fail), and the
  lab's own set-up cells get at least `course.labs.SETUP_TIMEOUT` seconds;
- with `--lab-notebook-timeout SECONDS` (course.grade passes its --notebook-timeout), all the
  cells of one notebook together get that long: a cell's limit is cut to what is left, and once
  nothing is, the notebook's remaining cells are not run and fail at once as timeouts, saying
  why (a student whose every call sleeps cannot hold the class);
- each cell's report carries `course_*` properties (student, notebook, check key, status and
  the reason a check failed, as the student's own verdict words it), which reach JUnit XML.
"""
from __future__ import annotations

import atexit
import os
import shutil
import time
import uuid
from pathlib import Path

import pytest

from course import labs as labs_module
from course.labs.running import kernel_socket_dir
from course.checks import failure_message
from course.grade.nbval_engine import grade_copy
from course.labs import confinement
from course.paths import LABS_DIR

MODES = ("solved", "unsolved", "grade")


def pytest_addoption(parser):
    group = parser.getgroup("course labs")
    group.addoption("--lab-mode", choices=MODES, help="run the given notebooks as labs")
    group.addoption("--lab-timeout", type=float, default=60, help="seconds per cell")
    group.addoption("--labs-dir", default=str(LABS_DIR), help="folder of the released labs")
    group.addoption("--lab-notebook-timeout", type=float, default=None,
                    help="graded copies: seconds for all the cells of one notebook together")


def pytest_configure(config):
    if config.getoption("--lab-mode"):
        # These notebooks are labs, not lessons: nbval must not also collect them.
        config.option.nbval = config.option.nbval_lax = False
    if os.environ.get(IPC_KERNELS):  # set by course.grade for its nbval runs
        use_ipc_kernels_in_nbval()


IPC_KERNELS = "COURSE_NBVAL_IPC_KERNELS"


def use_ipc_kernels_in_nbval() -> None:
    """nbval's kernels talk over local Unix sockets, as course.labs.run's do: nothing on the
    network, and no "running over TCP without encryption" warning to hide."""
    if os.name != "posix":
        return
    import nbval.kernel
    from jupyter_client.manager import KernelManager

    socket_dir = kernel_socket_dir()
    atexit.register(shutil.rmtree, socket_dir, True)

    class IpcKernelManager(KernelManager):
        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", os.path.join(socket_dir, uuid.uuid4().hex[:12]))
            super().__init__(**kwargs)

    nbval.kernel.KernelManager = IpcKernelManager


def pytest_collect_file(file_path, parent):
    if parent.config.getoption("--lab-mode") and file_path.suffix == ".ipynb":
        return LabNotebook.from_parent(parent, path=file_path)
    return None


class LabNotebook(pytest.File):
    """One lab notebook; it runs once, on the first of its items, and they share the outcome."""

    def collect(self):
        config = self.config
        self.mode = config.getoption("--lab-mode")
        self.timeout = config.getoption("--lab-timeout")
        if self.mode == "grade":
            self.student = labs_module.read_notebook(self.path)
            released = labs_module.find_released_labs(Path(config.getoption("--labs-dir")))
            self.lab = labs_module.match_lab(self.path, self.student, released)
        else:
            self.lab = labs_module.load_lab(self.path)
        self._outcome = None
        cells = [(i, c) for i, c in enumerate(self.lab.notebook.cells) if c.cell_type == "code"]
        for index, cell in cells:
            kind = labs_module.cell_kind(cell)
            if kind == "check" or self.mode == "solved":
                name = labs_module.cell_key(cell) if kind == "check" else f"cell-{index}"
                yield LabCell.from_parent(self, name=name, index=index)

    def outcome(self) -> labs_module.LabRun | dict[str, tuple[str, str]]:
        """A solved or unsolved run (a LabRun); in grade mode, check key -> (status, detail)."""
        if self._outcome is None:
            if self.mode == "grade":
                self._outcome = self._graded()
            else:
                nb = labs_module.solved(self.lab) if self.mode == "solved" else self.lab.notebook
                self._outcome = labs_module.run(self.lab, nb, timeout=self.timeout)
        return self._outcome


    def _graded(self) -> dict[str, tuple[str, str]]:
        """Grade the student's copy through the one grading path (course.grade's): its
        graded copy of the answer key, run by pytest + strict nbval in a fresh folder."""
        if self.lab.in_worker and confinement.problem():
            raise pytest.UsageError(f"cannot grade {self.path.name} confined here: {confinement.problem()} "
                                    f"(python -m course.grade --unconfined grades without the sandbox)")
        nb, program, self.notes = labs_module.nbval_graded(self.lab, self.student, self.path.stem,
                                                           self.path.name)
        return grade_copy(self.lab, nb, program, self.timeout,
                          self.config.getoption("--lab-notebook-timeout"))[0]


class LabCell(pytest.Item):
    def __init__(self, *, index: int, **kwargs):
        super().__init__(**kwargs)
        self.index = index

    def runtest(self):
        if self.parent.mode == "grade":
            status, detail = self.parent.outcome()[self.name]
            if status != "pass":
                notes = "".join(f"\n  note: {n}" for n in self.parent.notes)
                raise LabCellFailure(f"{status}: {detail}{notes}")
            return
        result = next(r for r in self.parent.outcome().results if r.index == self.index)
        if self.parent.mode == "unsolved":
            if result.status == "passed":
                raise LabCellFailure(f"check {result.key!r} passed on the unsolved stubs: it cannot "
                                     f"tell a solved lab from an unsolved one")
        elif result.status != "passed":
            raise LabCellFailure(f"{result.status}: {result.error}")

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, LabCellFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.path.name}::{self.name}"


class LabCellFailure(Exception):
    pass


# ------------------------------------------------------------------------ graded copies under nbval
def _graded_cell(item):
    """(notebook metadata, cell) when `item` is an nbval cell of a graded copy, else None."""
    nb = getattr(getattr(item, "parent", None), "nb", None)
    cell = getattr(item, "cell", None)
    if nb is None or cell is None or not hasattr(item.parent, "kernel"):
        return None
    graded = nb.metadata.get("course", {}).get("graded")
    return (graded, cell) if isinstance(graded, dict) else None


class HiddenCellError(Exception):
    """The kernel reports an error that the cell's outputs do not show."""


class NotebookTimeSpent(Exception):
    """The notebook's cells had used up --lab-notebook-timeout: this cell was not run."""


def _time_left(item) -> float | None:
    """Seconds left of the notebook's --lab-notebook-timeout (counted from its first cell), or
    None without one."""
    budget = item.config.getoption("--lab-notebook-timeout", None)
    if not budget:
        return None
    notebook = item.parent
    if getattr(notebook, "_course_started", None) is None:
        notebook._course_started = time.monotonic()
    return budget - (time.monotonic() - notebook._course_started)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    if _graded_cell(item):
        item.parent.timed_out = False  # an earlier timeout costs that cell only
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    found = _graded_cell(item)
    if not found:
        return (yield)
    _, cell = found
    option = item.config.option
    base = getattr(option, "_course_base_timeout", None) or option.nbval_cell_timeout
    option._course_base_timeout = base
    kind = labs_module.cell_kind(cell)
    # In a lab graded in a worker, the worker times each call to the student's code at `base` and stops it; the cell's own
    # limit is a backstop above that (a check may make several calls; the first exercise cell
    # starts the worker, which runs the set-up and every exercise).
    if item.parent.nb.metadata.get("course", {}).get("worker"):
        option.nbval_cell_timeout = (2 * base + 10 if kind == "check" else
                                     2 * max(base, labs_module.SETUP_TIMEOUT) + 10)
    else:  # the student's code runs in this kernel: each cell has the limit itself
        option.nbval_cell_timeout = base if kind in ("exercise", "check") else max(base, labs_module.SETUP_TIMEOUT)
    left = _time_left(item)
    item._course_cut = left is not None and left < option.nbval_cell_timeout
    if left is not None and left <= 0:
        budget = item.config.getoption("--lab-notebook-timeout")

        def not_run():
            raise NotebookTimeSpent(f"Timeout: not run: this notebook's cells had used up the {budget:g} s "
                                    f"they get in all (--notebook-timeout), so its remaining checks fail "
                                    f"at once")
        item.runtest = not_run
    elif item._course_cut:
        option.nbval_cell_timeout = left
    kernel = item.parent.kernel
    item._course_reply = None

    def await_reply(msg_id, timeout=None):  # nbval's own loop, keeping the reply's content
        while True:
            msg = kernel.get_message(stream="shell", timeout=timeout)
            if msg["parent_header"].get("msg_id") == msg_id:
                item._course_reply = msg["content"]
                if msg["content"]["status"] == "aborted":
                    raise RuntimeError("Kernel aborted execution request")
                return

    kernel.await_reply = await_reply
    try:
        result = yield
    finally:
        del kernel.await_reply
        option.nbval_cell_timeout = base
        item._course_timed_out = bool(item.parent.timed_out)
    reply = item._course_reply or {}
    if reply.get("status") == "error":
        raise HiddenCellError(f"the kernel reports {reply.get('ename')}: {reply.get('evalue')}, "
                              f"which the cell's outputs do not show")
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item, call):
    found = _graded_cell(item)
    if not found or call.when != "call":
        return None
    graded, cell = found
    kind, key = labs_module.cell_kind(cell), labs_module.cell_key(cell)
    reply = getattr(item, "_course_reply", None) or {}
    if call.excinfo is None:
        status, detail = "pass", ""
    elif call.excinfo.errisinstance(NotebookTimeSpent):
        status, detail = "timeout", str(call.excinfo.value)
    elif getattr(item, "_course_timed_out", False) and getattr(item, "_course_cut", False):
        status, detail = "timeout", (f"Timeout: this notebook's cells used up the "
                                     f"{item.config.getoption('--lab-notebook-timeout'):g} s they get "
                                     f"in all (--notebook-timeout) while this cell ran: it was interrupted")
    elif getattr(item, "_course_timed_out", False):
        status, detail = "timeout", (f"Timeout: the cell ran longer than "
                                     f"{item.config.option._course_base_timeout:g} s and was "
                                     f"interrupted (an infinite loop?)")
    elif reply.get("status") == "error" and reply.get("ename") == "StudentTimeout":  # the worker's limit
        status, detail = "timeout", f"Timeout: {reply.get('evalue') or ''}"
    elif reply.get("status") == "error":
        status = "fail"
        hint = cell.metadata.get("course", {}).get("hint", "") if kind == "check" else ""
        detail = failure_message(reply.get("ename") or "Error", reply.get("evalue") or "", hint)
    elif reply:
        status, detail = "fail", labs_module.NO_VERDICT
    else:
        status, detail = "not run", f"{call.excinfo.typename}: {call.excinfo.value}".splitlines()[0]
    item.user_properties += [("course_student", graded.get("student", "")),
                             ("course_notebook", graded.get("notebook", "")),
                             ("course_kind", kind or "code"), ("course_key", key or ""),
                             ("course_index", str(next(i for i, c in enumerate(item.parent.nb.cells) if c is cell))),
                             ("course_status", status), ("course_detail", detail)]
    return None


def pytest_sessionfinish(session):
    """nbval ends each judge's kernel with SIGKILL, so no judge removed its last sandbox's
    cgroups and scratch tmpfs: remove those whose judge is gone (never a living grader's)."""
    confinement.remove_leftovers()
