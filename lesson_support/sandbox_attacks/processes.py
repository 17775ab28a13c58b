"""Processes that outlive a call: found and killed after every command.

To see processes that outlive a call even after their parent died, the harness makes its own
process a "child subreaper" (Linux prctl): orphans are re-parented to it instead of init, so
after the call any new child still alive is a survivor. Survivors are then killed.

In a graded lab the student's functions run in a worker (course.labs.remote), so the commands
they start are the worker's descendants, not ours: those are watched too, read from /proc by
`course.labs.observe` (an orphan there is adopted by the sandbox's own init, or by this
process, the subreaper, when the worker runs without a sandbox).
"""
from __future__ import annotations

import ctypes
import os
import signal
import time
from functools import lru_cache

from course.labs.observe import process_table, worker_processes

SURVIVOR_GRACE_SECONDS = 0.3  # a process already sent SIGKILL may need a moment to be gone


@lru_cache(maxsize=1)
def become_subreaper() -> bool:
    """Make this process adopt orphaned descendants (Linux only). False where impossible."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # 36 = PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def child_processes() -> dict[int, str]:
    """pid -> state letter of every direct child of this process, read from /proc."""
    me = os.getpid()
    return {pid: state for pid, (parent, state) in process_table().items() if parent == me}


def watched_processes() -> dict[int, str]:
    """pid -> state of our own children and of the processes a graded lab's worker started."""
    return {**worker_processes(), **child_processes()}


def _reap(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def collect_survivors(before: set[int]) -> list[int]:
    """New children still alive after a grace period; all new children are then killed."""
    deadline = time.monotonic() + SURVIVOR_GRACE_SECONDS
    while True:
        new = {pid: state for pid, state in watched_processes().items() if pid not in before}
        alive = [pid for pid, state in new.items() if state not in "ZX"]
        if not alive or time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    _reap(new)
    for _ in range(5):  # killing a survivor can orphan its own children: adopt and kill them
        late = [pid for pid in watched_processes() if pid not in before]
        if not late:
            break
        _reap(late)
    return sorted(alive)
