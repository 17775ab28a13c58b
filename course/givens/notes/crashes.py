"""Lab 06's simulated crashes: record the `os.fsync` and `os.replace` calls of the code under
test, and make one of them fail as a dying machine would, in whichever process runs that code.

A check writes

    with os_calls(crash_at="replace") as calls:   # or "fsync", or no crash_at: only record
        error = raised(lambda: write_atomic(target, "new text"))

and after the block `calls` holds ("fsync", inode of the file flushed) and ("replace", source,
target, inode of the source), in order; inside it, the call named by `crash_at` raises
`SimulatedCrash` instead of running.

When a lab is graded, the student's code runs in the grader's worker, another process than the
checks (course.labs.remote): a patch of `os.fsync` made by the check would never see it. So the
patch is made once, by `record_os_calls()`, which the lab's set-up cell calls, and the set-up
runs wherever the lab's code does (in the student's kernel; in the grader, in the worker and in
the judge). The patched functions take their orders from a file: `os_calls` writes a control
file into the temporary folder, which the judge and the worker share (remote.start points the
judge's temporary files into the worker's scratch folder), each patched call appends itself to
the log the control file names, and `os_calls` reads the log back when the block ends. Only the
main thread's calls count (a kernel's own threads are not the code under test), and only a
control file of this user's (another user's, in a shared /tmp, is ignored).

A tool for the lab's checks, not an answer.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from pathlib import Path

from course.labs.observe import read_student_file

CRASH_POINTS = ("fsync", "replace")
_REAL = {"fsync": os.fsync, "replace": os.replace}  # the functions as the os module had them


class SimulatedCrash(OSError):
    """What os.fsync or os.replace raise inside os_calls(crash_at=...): the machine 'died' there."""


def _control_file() -> Path:
    return Path(tempfile.gettempdir()) / f"course-os-calls-{os.getuid()}.json"


def _read_orders(path: Path):
    """The JSON in a control file this process's user owns, or None."""
    try:
        with open(path, encoding="utf-8") as f:
            if os.fstat(f.fileno()).st_uid != os.getuid():
                return None
            return json.load(f)
    except (OSError, ValueError):
        return None


def _orders() -> dict | None:
    """What the active `os_calls` block asked for ({"crash_at", "log"}), or None if none is.

    Its control file is named after the uid of the process that wrote it. A confined worker runs
    as another uid than its judge (course.labs.confinement), yet sees the judge's files as its
    own: so, if there is no file under its own uid, any other control file it owns counts."""
    own = _control_file()
    orders = _read_orders(own)
    if orders is None and not own.exists():
        for path in sorted(own.parent.glob("course-os-calls-*.json")):
            orders = _read_orders(path)
            if orders is not None:
                break
    if not isinstance(orders, dict) or not isinstance(orders.get("log"), str) \
            or orders.get("crash_at") not in (None, *CRASH_POINTS):
        return None
    return orders


def _inode(fd_or_path):
    try:
        return os.stat(fd_or_path).st_ino  # os.stat takes an open descriptor or a path
    except (OSError, TypeError, ValueError):
        return None


def _record(name: str, call: list) -> None:
    """Log one call of the code under test; with crash_at=name, fail it."""
    if threading.current_thread() is not threading.main_thread():
        return
    orders = _orders()
    if orders is None:
        return
    try:
        with open(orders["log"], "a", encoding="utf-8") as log:
            log.write(json.dumps(call) + "\n")
    except OSError:
        pass
    if orders["crash_at"] == name:
        raise SimulatedCrash(f"simulated crash in os.{name}")


def _fsync(fd):
    _record("fsync", ["fsync", _inode(fd if isinstance(fd, int) else fd.fileno())])
    return _REAL["fsync"](fd)


def _replace(src, dst, **kwargs):
    _record("replace", ["replace", os.fspath(src), os.fspath(dst), _inode(src)])
    return _REAL["replace"](src, dst, **kwargs)


def record_os_calls() -> None:
    """From now on, os.fsync and os.replace in this process can be recorded and interrupted by
    `os_calls` (in any process that shares its temporary folder). Outside an `os_calls` block
    they do what they always do."""
    os.fsync, os.replace = _fsync, _replace


@contextlib.contextmanager
def os_calls(crash_at=None):
    """Record the calls the code under test makes to os.fsync and os.replace while the block
    runs: ("fsync", inode of the file flushed) and ("replace", source, target, inode of the
    source), in `calls` once the block has ended. With crash_at="fsync" or "replace", that call
    raises SimulatedCrash instead of running. The process running the code must have called
    `record_os_calls()` (the lab's set-up cell does)."""
    if crash_at not in (None, *CRASH_POINTS):
        raise ValueError(f"crash_at must be None, 'fsync' or 'replace', not {crash_at!r}")
    control = _control_file()
    fd, log = tempfile.mkstemp(prefix="course-os-calls-", suffix=".log")
    os.close(fd)
    calls: list[tuple] = []
    try:
        with open(control, "w", encoding="utf-8") as f:
            json.dump({"crash_at": crash_at, "log": log}, f)
        yield calls
    finally:
        control.unlink(missing_ok=True)
        try:  # the worker's code can replace the log (by a link to /dev/zero, a FIFO): bounded
            lines = read_student_file(log).decode("utf-8", "replace").splitlines()
        except OSError:
            lines = []
        Path(log).unlink(missing_ok=True)
        for line in lines:
            try:
                call = json.loads(line)
            except ValueError:
                continue
            if isinstance(call, list):
                calls.append(tuple(call))
