"""Running a lab notebook in one fresh kernel, cell by cell, never stopping at an error: `run`
(with a per-cell timeout), `run_solved` and `run_unsolved`; and what a run records
(`CellResult` per cell, `LabRun` for the notebook)."""
from __future__ import annotations

import copy
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course.labs.judging import error_of, error_text, stdout_text, judge_verdict_check
from course.labs.lab import Lab, cell_key, cell_kind, cell_points
from course.labs.variants import solved

TIMEOUT_ENAME = "CourseCellTimeout"
SETUP_TIMEOUT = 120  # at least this long for the lab's own cells (no student code of their own)


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


def cell_problem(kind: str | None, key: str | None, index: int, status: str, error: str) -> str:
    """The gradebook's note on a set-up or exercise cell that did not run cleanly."""
    what = f"exercise {key!r}" if kind == "exercise" else f"set-up cell {index} (from the release)"
    status = {"timeout": "timed out", "fail": "failed"}.get(status, status)
    last = error.splitlines()[-1] if error else ""
    return f"{what} {status}: {last}; the checks after it may fail because of it"


def _kernel_config(socket_dir: str):
    """Kernels talk over local Unix sockets (IPC), not TCP: nothing leaves the machine, and
    ipykernel has no reason to warn about unencrypted TCP. Windows has no IPC transport."""
    from traitlets.config import Config

    config = Config()
    if os.name == "posix":
        config.KernelManager.transport = "ipc"
        config.KernelManager.ip = os.path.join(socket_dir, "kernel")
    return config


def kernel_socket_dir() -> str:
    base = tempfile.gettempdir()
    if len(base) > 60 and os.path.isdir("/tmp"):  # Unix socket paths are limited to ~100 bytes
        base = "/tmp"
    return tempfile.mkdtemp(prefix="course-kernel-", dir=base)


def run(lab: Lab, nb: nbformat.NotebookNode, timeout: float = 120, cwd: Path | None = None) -> LabRun:
    """Execute every code cell in order, in one fresh kernel; never stop at an error.

    A cell running longer than `timeout` seconds is interrupted and counted as a timeout (the
    lab's own set-up cells get at least SETUP_TIMEOUT, so a slow machine does not cost a
    student every check); a dead kernel marks the cells after it as not run. Check cells are
    judged by the verdict they display: this runs a lab as the student does (graded work is
    judged under nbval, never here).
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    nb = copy.deepcopy(nb)
    replies: dict[int, dict] = {}

    def cell_timeout(cell) -> float:
        return timeout if cell_kind(cell) in ("exercise", "check") else max(timeout, SETUP_TIMEOUT)

    socket_dir = kernel_socket_dir()
    client = NotebookClient(
        nb, timeout_func=cell_timeout, allow_errors=True, interrupt_on_timeout=True,
        error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "interrupted", "traceback": []},
        on_cell_executed=lambda cell, cell_index, execute_reply: replies.__setitem__(cell_index, execute_reply),
        kernel_name="python3", config=_kernel_config(socket_dir), shutdown_kernel="immediate",
        resources={"metadata": {"path": str(cwd or lab.path.parent)}})
    outcome = LabRun(lab)
    dead = None
    try:
        # in English whatever the caller's COURSE_LANGUAGE: the tally is read as English text
        with client.setup_kernel(env={**os.environ, "COURSE_LANGUAGE": "en"}):
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
        status, message, error_type = judge_verdict_check(cell, reply)
        return CellResult(index, kind, key, status, message, points, error_type)
    if kind == "tally":
        return CellResult(index, kind, key, "failed" if error_of(cell, reply) else "passed",
                          stdout_text(cell).strip())
    error = error_of(cell, reply)
    if error:
        return CellResult(index, kind, key, "failed", error_text(*error), points, error[0])
    return CellResult(index, kind, key, "passed", "", points)


def run_solved(lab: Lab, timeout: float = 300) -> LabRun:
    return run(lab, solved(lab), timeout)


def run_unsolved(lab: Lab, timeout: float = 300) -> LabRun:
    return run(lab, lab.notebook, timeout)
