"""The judge's side of a graded lab: the worker that holds the student's code, and the names the
checks call it by.

A graded copy of a lab (`course.labs.answer_keys.nbval_notebook`) never runs a student's cell in
its own kernel. Its first cell starts a `Worker` (`start`): a separate process, confined by
`course.labs.confinement` unless the grader was told --unconfined, that runs the lab's set-up
cells and the student's exercise cells. Each exercise cell of the copy then binds the names its
released stub defines to the worker's objects (`Worker.bind`): a check calling `compact(...)`
sends plain data to the worker and gets plain data back (`course.labs.wire`), so no student code
runs where the asserts run and the verdict is decided.

Each call gets `timeout` seconds. A call that runs longer, or a worker that dies (os._exit, a
crash, a limit), costs that call: the worker is stopped, the call raises a clear error, and the
next call starts a fresh worker from the same program, so the checks after it still run. An
exercise that ran out of time is not called again: later calls to it fail at once, as timed
out earlier, so one endless loop costs one timeout, not one per check that calls it.

What the judge decides (a timeout, the worker's death, a message too large to accept) is
decided here, from outside the worker; nothing the worker sends can say it (`course.labs.wire`).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course.checks import StudentAssertionError
from course.file_trees import file_sizes, remove_tree
from course.labs import confinement, observe
from course.labs.wire import (CallTimeout, Endpoint, LineReader, MessageTooLarge, Remote, WireError,
                              load_data_types)

START_TIMEOUT = 120  # the program's set-up cells and exercises, at start
SCRATCH_QUOTA = 512 * 2**20  # bytes the scratch folder may hold after a call


class StudentTimeout(TimeoutError):
    """A call to the student's code ran past its time limit (the gradebook's "timeout")."""


class ExerciseError(Exception):
    """The student's exercise cell raised when the worker ran it."""


class WorkerStopped(RuntimeError):
    """The worker ended while it was answering: the student's code ended or crashed it."""


class _JudgeEndpoint(Endpoint):
    """The judge's endpoint: each outermost request is timed, and a failure stops the worker."""

    def __init__(self, worker: "Worker"):
        super().__init__(None, None)
        self.worker = worker

    def send(self, message: dict) -> None:
        try:
            super().send(message)
        except OSError as exc:  # the worker is gone: its pipe is broken
            raise WireError(f"the worker is gone ({exc.strerror or exc})") from None

    def prepare(self) -> None:
        if self.worker.depth == 0:
            self.worker.ensure_running()

    def _error_of(self, error) -> BaseException:
        """The worker's exception; an AssertionError raised in the student's exercise (the
        worker says where) is theirs, not a check's verdict: a `StudentAssertionError`."""
        exc = super()._error_of(error)
        if type(exc) is AssertionError and isinstance(error, dict) and error.get("where"):
            theirs = StudentAssertionError(*exc.args)
            for note in getattr(exc, "__notes__", ()):
                theirs.add_note(note)
            return theirs
        return exc

    def request(self, op: str, **fields):
        worker = self.worker
        outermost = worker.depth == 0
        what = fields.get("what") if op == "call" else None  # an exercise's name, for a call to one
        if outermost and what in worker.timed_out:
            raise StudentTimeout(f"{what} timed out earlier (it ran for {worker.timeout:g} s and was "
                                 f"stopped), so it was not called again")
        if outermost:
            worker.ensure_running()
            self.reader.deadline = time.monotonic() + worker.timeout
            worker.failure = None
        worker.depth += 1
        try:
            return super().request(op, **fields)
        except CallTimeout:
            if outermost and what in worker.exercise_names:
                worker.timed_out.add(what)
            worker.fail(StudentTimeout(f"your code did not return within {worker.timeout:g} s, "
                                     f"so it was stopped (an infinite loop? a wait that never ends?)"))
        except MessageTooLarge as exc:  # the student's answer, not the judge's failure
            worker.fail(WorkerStopped(f"your code sent the judge {exc}, more than it accepts in one "
                                      f"message: the call failed and the worker was stopped"))
        except WireError as exc:
            if worker.failure is not None:  # a nested call already stopped it (and said why)
                raise worker.failure from None
            worker.fail(WorkerStopped(worker.why_stopped(exc)))
        except (KeyboardInterrupt, SystemExit):  # interrupted while the worker was busy: its
            worker.stop()                          # state is unknown, so it starts afresh
            raise
        finally:
            worker.depth -= 1
            if outermost:
                self.reader.deadline = None
                if worker.failure is None:
                    worker.check_scratch()


class Worker:
    """One submission's worker process and the judge's connection to it."""

    def __init__(self, cells: list[dict], scratch: Path, *, confined: bool = True,
                 timeout: float = 60, answers: tuple[str, ...] = (),
                 limits: confinement.Limits = confinement.Limits()):
        self.cells, self.scratch = cells, Path(scratch)
        self.confined, self.timeout, self.limits = confined, timeout, limits
        self.answers = tuple(answers)  # the reference modules it may read (confinement.answer_paths)
        self.endpoint = _JudgeEndpoint(self)
        self.process: subprocess.Popen | None = None
        self.reports: list[dict] = []
        self.depth = 0
        self.failure: BaseException | None = None
        self.starts = 0
        self.exercise_names: set[str] = set()  # the names `bind` gave the checks
        self.timed_out: set[str] = set()  # exercises a call to which ran out of time
        self._stderr = None
        self._group: confinement.ProcessGroup | None = None

    # ------------------------------------------------------------------ the process
    def argv(self) -> list[str]:
        argv = [sys.executable, "-m", "course.labs.worker"]
        if not self.confined:
            return argv
        return confinement.command(argv, self.scratch, self.limits, answers=self.answers)

    def ensure_running(self) -> None:
        if self.process is not None and self.process.poll() is None:
            return
        self.stop()
        (self.scratch / "tmp").mkdir(parents=True, exist_ok=True)
        self._stderr = tempfile.TemporaryFile()
        self._group = confinement.ProcessGroup(self.limits) if self.confined else None
        try:
            self.process = subprocess.Popen(
                self.argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                cwd=self.scratch, start_new_session=True,
                env={**os.environ, "TMPDIR": str(self.scratch / "tmp")},
                preexec_fn=confinement.set_limits(self.limits, self._group) if self.confined else None)
        except (OSError, subprocess.SubprocessError) as exc:  # the grader's fault, not the student's
            if self._group is not None:
                self._group.close()
                self._group = None
            self._stderr.close()
            self._stderr = None
            raise WorkerStopped(f"the worker for your code could not be started ({exc})") from None
        self.starts += 1
        endpoint = self.endpoint
        endpoint.reader, endpoint.writer = LineReader(self.process.stdout.fileno()), self.process.stdin
        endpoint.epoch += 1
        endpoint.send({"program": {"cells": self.cells}})
        endpoint.reader.deadline = time.monotonic() + max(START_TIMEOUT, self.timeout)
        try:
            ready = endpoint.receive()
        except CallTimeout:
            self.stop()
            raise StudentTimeout(f"the lab's set-up and your exercise cells did not finish within "
                               f"{max(START_TIMEOUT, self.timeout):g} s in the worker") from None
        except WireError as exc:
            why = self.why_stopped(exc)
            self.stop()
            raise WorkerStopped(why) from None
        finally:
            endpoint.reader.deadline = None
        cells = ready.get("cells") if isinstance(ready, dict) else None
        self.reports = cells if isinstance(cells, list) else []
        observe.worker_started(self.process.pid)  # what runs in its tree now is the worker itself

    def why_stopped(self, exc: BaseException) -> str:
        status = None
        if self.process is not None:
            try:
                status = self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if status is None:
            return f"the worker running your code stopped answering ({exc})"
        if status < 0:
            name = signal.Signals(-status).name if -status in signal.Signals._value2member_map_ else -status
            return (f"the worker running your code was killed by {name} (a limit on memory, "
                    f"processes or file size? a signal your code sent?)")
        detail = self._startup_error()
        return (f"the worker running your code exited with status {status} (os._exit? sys.exit? a crash?)"
                + (f": {detail}" if detail else ""))

    def _startup_error(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read(4000).decode("utf-8", "replace").strip()
        return text.splitlines()[-1] if text else ""

    def fail(self, error: BaseException):
        self.failure = error
        self.stop()
        raise error

    def stop(self) -> None:
        """Kill the worker and everything it started (its sandbox's process tree goes with it)."""
        process, self.process = self.process, None
        if process is None:
            return
        group, self._group = self._group, None
        observe.worker_stopped(process.pid)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if group is not None:
            group.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def check_scratch(self) -> None:
        """A call that left more than SCRATCH_QUOTA bytes in the scratch folder fails."""
        total = 0
        for size in file_sizes(self.scratch):  # not os.walk: a tree may be deeper than recursion goes
            total += size
            if total > SCRATCH_QUOTA:
                try:  # all the call left, not only tmp/ (a tmpfs scratch stays mounted, empty)
                    remove_tree(self.scratch)
                except OSError:
                    pass
                (self.scratch / "tmp").mkdir(parents=True, exist_ok=True)
                self.fail(OSError(f"your code wrote more than {SCRATCH_QUOTA // 2**20} MB "
                                  f"into its folder: stopped, and the files removed"))

    # ------------------------------------------------------------------ what the copy calls
    def bind(self, namespace: dict, key: str, names: list[str]) -> None:
        """Bind `names` (what exercise `key`'s stub defines) to the worker's objects; then raise
        the exercise's own error, if running it failed."""
        try:
            self.endpoint.request("global", name="__name__")  # starts the worker if it is not running
        except (TimeoutError, WorkerStopped) as exc:  # it cannot even start: every name says why
            for name in names:
                namespace[name] = _Unavailable(name, exc)
            raise
        self.exercise_names.update(names)
        for name in names:
            try:
                namespace[name] = self.endpoint.lookup(name)
            except NameError:
                namespace.pop(name, None)  # not defined by the student: a check's NameError says so
        report = next((r for r in self.reports if r.get("kind") == "exercise" and r.get("key") == key), None)
        error = (report or {}).get("error")
        if isinstance(error, dict):
            where = f" ({error['where']})" if error.get("where") else ""
            raise ExerciseError(f"{error.get('type', 'Exception')}: {error.get('message', '')}{where}")


class _Unavailable:
    """Stands for an exercise's name when the worker could not start: using it says why."""

    def __init__(self, name: str, error: BaseException):
        self.name, self.error = name, error

    def __call__(self, *args, **kwargs):
        raise WorkerStopped(f"{self.name} cannot run: {self.error}")

    def __repr__(self):
        return f"<{self.name}: not available, {self.error}>"


def start(program_file: str | os.PathLike) -> Worker:
    """The first cell of a graded copy: read the program the grader wrote, point this kernel's
    temporary files into the scratch folder (so the paths checks pass mean the same to the
    worker), and start the worker."""
    load_data_types()  # what the wire may rebuild, loaded before the worker says anything
    program_file = Path(program_file).resolve()
    program = json.loads(program_file.read_text(encoding="utf-8"))
    scratch = program_file.parent / program["scratch"]  # beside the program, wherever it was moved
    if program.get("confined", True) and scratch.is_dir():
        confinement.bound_scratch(scratch)  # a tmpfs of bounded size, where the grader is root
    (scratch / "tmp").mkdir(parents=True, exist_ok=True)
    tempfile.tempdir = str(scratch / "tmp")
    os.environ["TMPDIR"] = tempfile.tempdir
    worker = Worker(program["cells"], scratch, confined=bool(program.get("confined", True)), timeout=float(program.get("timeout", 60)),
                    answers=tuple(program.get("answers", ())))
    return worker  # started by the first `bind`, which says why if it cannot start


__all__ = ["CallTimeout", "ExerciseError", "Remote", "StudentTimeout", "Worker", "WorkerStopped", "start"]
