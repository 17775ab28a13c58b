"""What the judge sees of a graded lab's workers from outside: the processes the student's code
started and the memory the worker held. A check that judges what that code did (lab 07's
canaries: a process that outlived a call, a tool that held a flood of output in memory) reads
it here, from /proc, never from the worker, whose answers the student's code could forge.

    worker_started / worker_stopped     the workers of this process (remote.Worker calls them)
    worker_processes()                  pid -> state of every process in a worker's tree that is
                                        not the worker itself (its sandbox and interpreter,
                                        recorded when it started)
    process_table()                     pid -> (parent pid, state) of every process, from /proc
    WorkerMemory                        the growth of each worker's peak resident memory over a
                                        span of time (Linux's VmHWM, reset through clear_refs)
    read_student_file(path)             the bytes of a file the student's code wrote (or could
                                        have replaced), read with a bound: only a regular file,
                                        not through a link, at most STUDENT_FILE_BYTES
"""
from __future__ import annotations

import os
import stat

STUDENT_FILE_BYTES = 16 * 2**20  # what the judge reads of one file the student's code made

_WORKERS: dict[int, set[int]] = {}  # pid of a running worker -> the pids that are the worker itself


def process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state letter) of every process, read from /proc."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # it exited while we looked
        found[int(entry)] = (int(fields[1]), fields[0].decode())
    return found


def tree(pid: int, table: dict | None = None) -> dict[int, str]:
    """pid -> state of `pid` and every process below it."""
    table = process_table() if table is None else table
    children: dict[int, list[int]] = {}
    for child, (parent, _) in table.items():
        children.setdefault(parent, []).append(child)
    found, todo = {}, [pid]
    while todo:
        current = todo.pop()
        if current in table and current not in found:
            found[current] = table[current][1]
            todo.extend(children.get(current, ()))
    return found


def worker_started(pid: int) -> None:
    """A worker started as `pid` and is ready: what runs in its tree now is the worker itself
    (the sandbox, the interpreter, anything its set-up started), not a command under test."""
    _WORKERS[pid] = set(tree(pid))


def worker_stopped(pid: int) -> None:
    _WORKERS.pop(pid, None)


def worker_processes() -> dict[int, str]:
    """pid -> state of every process in a running worker's tree other than the worker itself."""
    if not _WORKERS:
        return {}
    table = process_table()
    found = {}
    for pid, own in list(_WORKERS.items()):
        found.update({p: s for p, s in tree(pid, table).items() if p not in own})
    return found


def _interpreters() -> list[int]:
    """The pid of each worker's Python process (below its sandbox when it is confined)."""
    table, found = process_table(), []
    for pid, own in list(_WORKERS.items()):
        for candidate in sorted(own & set(tree(pid, table))):
            try:
                with open(f"/proc/{candidate}/cmdline", "rb") as handle:
                    argv = handle.read().split(b"\0")
            except OSError:
                continue
            if argv[1:3] == [b"-m", b"course.labs.worker"]:
                found.append(candidate)
    return found


def _status(pid: int, field: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024  # reported in kB
    except (OSError, ValueError, IndexError):
        pass
    return None


class WorkerMemory:
    """How far each worker's resident memory rose above where it was at `start()`."""

    def __init__(self):
        self._before: dict[int, int] = {}

    def start(self) -> None:
        self._before = {}
        for pid in _interpreters():
            resident = _status(pid, "VmRSS")
            try:
                with open(f"/proc/{pid}/clear_refs", "w") as handle:
                    handle.write("5")  # reset the peak (VmHWM) to what is resident now
            except OSError:
                continue  # not ours to reset: nothing measured for it
            if resident is not None:
                self._before[pid] = resident

    def growth(self) -> int:
        """The largest rise of a worker's peak resident memory since `start()`, in bytes."""
        rises = [peak - before for pid, before in self._before.items()
                 if (peak := _status(pid, "VmHWM")) is not None]
        return max(rises, default=0)


def read_student_file(path: str | os.PathLike, limit: int = STUDENT_FILE_BYTES) -> bytes:
    """The bytes of the file at `path`, which the student's code wrote or could have replaced,
    as the judge may read it: a regular file only, its own name not followed if it is a link (a
    link to /dev/zero would be read for ever, one to a host file would show it; a FIFO would
    block), at most `limit` bytes. Anything else raises OSError saying what was there."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(path):
            raise OSError(f"{os.fspath(path)} is a link, which the judge does not follow") from None
        raise exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{os.fspath(path)} is not a regular file")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(2**20, limit + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        raise OSError(f"{os.fspath(path)} holds more than {limit} bytes, more than the judge reads")
    finally:
        os.close(fd)
