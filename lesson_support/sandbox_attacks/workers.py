"""Worker processes that judge attacks side by side (see `runs.run_attacks`).

Most attacks take milliseconds, but a few wait out the tool's whole timeout (the "stalled"
canary), which made each table take seconds. Each worker judges one attack at a time, so the
processes that outlive a call and the memory held are still that attack's own: a worker is the
subreaper of its own children and traces its own memory (threads in one process could not tell
attacks apart).

The workers are `course.workers`' plain Python processes (why not multiprocessing: there).
"""
from __future__ import annotations

import atexit

from course.workers import Pool, WorkerDied

WORKERS = 4  # waiting attacks overlap; more would only add start-up on a small machine

_pool = Pool(WORKERS)


def map_in_workers(function, argument_lists) -> list:
    """[function(*args) for args in argument_lists], run in up to WORKERS worker processes
    (function and arguments must pickle), in order; an exception raised there is raised here."""
    try:
        return _pool.map(function, argument_lists)
    except WorkerDied as exc:
        raise WorkerDied(f"{exc}: a red-team worker died; run the cell again") from None


@atexit.register
def stop_workers():
    _pool.stop()
