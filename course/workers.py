"""Worker processes: run picklable module-level functions in other Python processes, side by side.

Used where work must leave this process: the teaching model answers concurrent requests in
workers (Python threads share one interpreter lock, and most of an answer holds it), and the
red-team harness judges each attack in a process of its own (the processes that outlive a call
and the memory held are then that attack's).

A worker is a plain Python subprocess (`python -c "from course.workers import main; main()"`),
started on first need and kept; it reads a pickled (function, args) on stdin and writes a
pickled (ok, result or exception) on stdout, one call at a time. Not multiprocessing: its spawn
re-runs the caller's main script, which a script without an `if __name__ == "__main__"` guard
does not survive, and forking a process that runs threads (a Jupyter kernel) can deadlock. A
worker runs in a session of its own (the interrupt Jupyter sends the kernel's process group is
not for it) and ends when its input closes. Only what this process sent is ever unpickled here
from what the worker returns: the worker runs our own code.
"""
from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from course.paths import REPO_ROOT

ENTRY = "from course.workers import main; main()"


class WorkerDied(RuntimeError):
    """The worker process ended (or its pipe broke) before it answered."""


class Worker:
    """One worker process, started now; `call(function, *args)` runs there and returns."""

    def __init__(self):
        path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
        self.process = subprocess.Popen([sys.executable, "-c", ENTRY], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": path},
                                        start_new_session=True)

    def call(self, function, *args):
        try:
            pickle.dump((function, args), self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.flush()
            ok, result = pickle.load(self.process.stdout)
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            raise WorkerDied(f"a worker process ended unexpectedly ({exc!r})") from None
        if not ok:
            raise result
        return result

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()  # the worker ends at the end of its input
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Pool:
    """At most `size` workers, started on first need; a call waits for an idle one."""

    def __init__(self, size: int):
        self.size = size
        self._idle: queue.SimpleQueue[Worker] = queue.SimpleQueue()
        self._started: list[Worker] = []
        self._lock = threading.Lock()

    def _take(self) -> Worker:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if len(self._started) < self.size:
                worker = Worker()
                self._started.append(worker)
                return worker
        return self._idle.get()

    def call(self, function, *args):
        """function(*args) in a worker; its exception is raised here, WorkerDied if it died
        (a new worker starts next time)."""
        worker = self._take()
        try:
            result = worker.call(function, *args)
        except WorkerDied:
            with self._lock:
                self._started.remove(worker)
            worker.process.kill()
            worker.process.wait()
            raise
        except BaseException:
            self._idle.put(worker)
            raise
        self._idle.put(worker)
        return result

    def map(self, function, argument_lists) -> list:
        """[function(*args) for args in argument_lists], in the workers side by side, in order."""
        calls = [(function, *args) for args in argument_lists]
        with ThreadPoolExecutor(min(self.size, len(calls)) or 1) as threads:
            return list(threads.map(lambda call: self.call(*call), calls))

    def stop(self) -> None:
        """Stop every worker (at exit; one still busy ends with its input)."""
        with self._lock:
            workers, self._started = self._started, []
        for worker in workers:
            worker.stop()


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
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # an unpicklable result or exception: said in a sentence
            data = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        outbox.write(data)
        outbox.flush()


def main() -> None:
    """A worker process's entry point."""
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever else prints goes to stderr, never into the answers
    serve(sys.stdin.buffer, answers)
