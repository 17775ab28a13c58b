"""Worker processes that answer teaching-model requests outside the server's process.

An answer is a pure function of the request body (`server.answer`), so several can be computed
at once, one per core, in processes of their own: Python threads share one interpreter lock,
and most of an answer holds it. Each worker is a Python process
(`python -c "from course.llm.workers import main; main()"`), started on first need and kept;
it reads a request (length-prefixed pickles on stdin) and writes the outcome on stdout. It is
a plain subprocess, not multiprocessing's: that would re-run the caller's main script in every
worker, which a script without an `if __name__ == "__main__"` guard does not survive. A
worker ends when its parent closes the pipe (or exits).
"""
from __future__ import annotations

import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from pathlib import Path

HEADER = struct.Struct("<Q")
ENTRY = "from course.llm.workers import main; main()"  # not -m: the package imports this module
ROOT = str(Path(__file__).resolve().parents[2])  # the folder that holds the course package


def _read_exact(stream, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise EOFError("the worker's pipe closed")
    return data


def _write(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def _read(stream):
    (size,) = HEADER.unpack(_read_exact(stream, HEADER.size))
    return pickle.loads(_read_exact(stream, size))


class Worker:
    def __init__(self):
        path = os.environ.get("PYTHONPATH")
        env = dict(os.environ, PYTHONPATH=ROOT + (os.pathsep + path if path else ""))
        self.process = subprocess.Popen([sys.executable, "-c", ENTRY],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def call(self, raw: bytes, block: int):
        _write(self.process.stdin, (raw, block))
        return _read(self.process.stdout)

    def stop(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        self.process.wait(timeout=10)


class Pool:
    """At most `size` workers; a request waits for an idle one."""

    def __init__(self, size: int):
        self.size = size
        self._idle: queue.SimpleQueue[Worker] = queue.SimpleQueue()
        self._started = 0
        self._lock = threading.Lock()

    def _take(self) -> Worker:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            start = self._started < self.size
            if start:
                self._started += 1
        return Worker() if start else self._idle.get()

    def run(self, raw: bytes, block: int):
        """The worker's outcome for this request, or None if the worker died (the caller then
        answers in its own thread; a new worker starts next time)."""
        worker = self._take()
        try:
            outcome = worker.call(raw, block)
        except (OSError, EOFError, pickle.UnpicklingError):
            worker.process.kill()
            with self._lock:
                self._started -= 1
            return None
        self._idle.put(worker)
        return outcome


    def stop(self) -> None:
        """Stop the idle workers (at exit: a worker still busy ends with its pipe)."""
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                return
            worker.stop()


def main() -> None:
    """The worker's loop: answer requests until the parent closes stdin."""
    requests, replies = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to stderr, never into the replies
    from course.llm.server import _work

    while True:
        try:
            raw, block = _read(requests)
        except EOFError:
            return
        try:
            outcome = _work(raw, block)
        except Exception as exc:  # a bug: reported, and the worker lives on
            outcome = ("crash", f"{type(exc).__name__}: {exc}", None)
        _write(replies, outcome)

