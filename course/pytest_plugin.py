"""pytest options for labs (loaded by the repository's conftest.py).

    pytest --lab-mode=solved   labs/01_agent_loop_lab.ipynb   every cell must pass with the
                                                              reference solution injected
    pytest --lab-mode=unsolved labs/01_agent_loop_lab.ipynb   every check must fail on the stubs
    pytest --lab-mode=grade    path/to/student_copy.ipynb     checks restored from the released
                                                              lab, per-cell timeout; one test per check
Options: --lab-timeout SECONDS (per cell, default 60), --labs-dir DIR (released labs, default the
course's labs/). A notebook is matched to its released lab by `course.labs.match_lab`, as
`course.grade` does, with the same fallback and the same messages.
Without --lab-mode, notebooks are lessons and nbval runs them as usual.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from course import labs as labs_module
from course.paths import LABS_DIR

MODES = ("solved", "unsolved", "grade")


def pytest_addoption(parser):
    group = parser.getgroup("course labs")
    group.addoption("--lab-mode", choices=MODES, help="run the given notebooks as labs")
    group.addoption("--lab-timeout", type=float, default=60, help="seconds per cell")
    group.addoption("--labs-dir", default=str(LABS_DIR), help="folder of the released labs")


def pytest_configure(config):
    if config.getoption("--lab-mode"):
        # These notebooks are labs, not lessons: nbval must not also collect them.
        config.option.nbval = config.option.nbval_lax = False


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

    def outcome(self) -> labs_module.LabRun:
        if self._outcome is None:
            if self.mode == "grade":  # in a fresh working folder, as course.grade runs it
                nb, _ = labs_module.graded(self.lab, self.student)
                with tempfile.TemporaryDirectory(prefix="course-grade-") as cwd:
                    self._outcome = labs_module.run(self.lab, nb, timeout=self.timeout, cwd=Path(cwd))
            else:
                nb = labs_module.solved(self.lab) if self.mode == "solved" else self.lab.notebook
                self._outcome = labs_module.run(self.lab, nb, timeout=self.timeout)
        return self._outcome


class LabCell(pytest.Item):
    def __init__(self, *, index: int, **kwargs):
        super().__init__(**kwargs)
        self.index = index

    def runtest(self):
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
