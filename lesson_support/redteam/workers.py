"""Worker processes that judge attacks side by side (see `runs.run_attacks`).

Most attacks take milliseconds, but a few wait out the tool's whole timeout (the "stalled"
canary), which made each table take seconds. Each worker judges one attack at a time, so the
processes that outlive a call and the memory held are still that attack's own: a worker is the
subreaper of its own children and traces its own memory (threads in one process could not tell
attacks apart).

A worker is a Python process running `serve`, reading pickled (function, args) from
stdin and writing pickled (ok, result or exception) to its stdout. Plain processes, not
multiprocessing: its spawn re-runs the caller's main script, which breaks an unguarded one, and
forking a process that runs threads (a Jupyter kernel) can deadlock.
"""
from __future__ import annotations

import atexit
import os
import pickle
import queue
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from course.paths import REPO_ROOT

WORKERS = 4  # waiting attacks overlap; more would only add start-up on a small machine


class WorkerDied(RuntimeError):
    pass


class Worker:
    """One worker process, started now; `call(function, *args)` runs there and returns."""

    def __init__(self):
        path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from lesson_support.redteam.workers import main; main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": path},
            start_new_session=True)  # an interrupt of the kernel's group is not for workers

    def call(self, function, *args):
        try:
            pickle.dump((function, args), self.process.stdin)
            self.process.stdin.flush()
            ok, result = pickle.load(self.process.stdout)
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            raise WorkerDied(f"a red-team worker process ended unexpectedly ({exc!r}); "
                             f"run the cell again") from None
        if not ok:
            raise result
        return result

    def stop(self):
        if self.process.poll() is None:
            self.process.stdin.close()  # the worker ends at the end of its input
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


_idle: queue.SimpleQueue = queue.SimpleQueue()
_started: list[Worker] = []


def _borrowed_call(task):
    """Run one task on an idle worker (started on first use, then kept)."""
    try:
        worker = _idle.get_nowait()
    except queue.Empty:
        worker = Worker()
        _started.append(worker)
    try:
        return worker.call(*task)
    except WorkerDied:
        _started.remove(worker)
        worker.stop()
        worker = None
        raise
    finally:
        if worker is not None:
            _idle.put(worker)


def map_in_workers(function, argument_lists) -> list:
    """[function(*args) for args in argument_lists], run in up to WORKERS worker processes
    (function and arguments must pickle), in order; an exception raised there is raised here."""
    tasks = [(function, *args) for args in argument_lists]
    with ThreadPoolExecutor(min(WORKERS, len(tasks)) or 1) as threads:
        return list(threads.map(_borrowed_call, tasks))


@atexit.register
def stop_workers():
    while _started:
        _started.pop().stop()


def serve(inbox, outbox) -> None:
    """The worker's loop: one (function, args) in, one (ok, result) out, until the input ends."""
    while True:
        try:
            function, args = pickle.load(inbox)
        except EOFError:
            return
        try:
            answer = (True, function(*args))
        except Exception as exc:  # sent back and raised in the caller
            answer = (False, exc)
        try:
            data = pickle.dumps(answer)
        except Exception as exc:
            data = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        outbox.write(data)
        outbox.flush()


def main() -> None:
    """A worker process's entry point."""
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever else prints goes to stderr, not into the answers
    serve(sys.stdin.buffer, answers)
