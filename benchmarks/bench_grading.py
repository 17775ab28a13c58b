"""Grading throughput: lab runs graded per minute with 1 and with 2 jobs. Prints figures;
asserts nothing.

    python benchmarks/bench_grading.py [--students 8] [--lab 01_agent_loop_lab] [--jobs 1 2]

Builds a class of `--students` copies of one released lab, half of them solved with the
reference solution (every check runs to its end) and half half-solved (some checks fail), then
grades it with `course.grade` at each `--jobs` and prints runs per minute and the speed-up over
one job, as a share of the ceiling two CPU-bound processes reach here. Each graded notebook is a
fresh kernel and worker, so the figures include their start-up; on a busy machine compare the
ratios, not the absolute numbers.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import multiprocessing
import tempfile
import time
from pathlib import Path

import jupyter_client

import nbformat

import course.grade
from course.labs import cell_key, cell_kind, load_lab
from course.labs.remote import Worker
from course.paths import LABS_DIR
from timing import best_time

SPIN = 3_000_000  # fixed pure-Python work: well over a second per process here


def spin() -> None:
    total = 0
    for i in range(SPIN):
        total += i * i % 7


def ceiling() -> float:
    """The best speed-up two jobs can get here: two CPU-bound processes one after another vs side
    by side (the same process start cost both ways)."""
    def run(together: bool) -> float:
        procs = [multiprocessing.Process(target=spin) for _ in range(2)]
        started = time.perf_counter()
        for p in procs:
            p.start()
            if not together:
                p.join()
        for p in procs:
            p.join()
        return time.perf_counter() - started
    return min(run(False) for _ in range(2)) / min(run(True) for _ in range(2))


def kernel_floor() -> float:
    """A kernel started and shut down with nothing run in it."""
    def once():
        manager, client = jupyter_client.manager.start_new_kernel(kernel_name="python3")
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return best_time(once, repeats=3)


def worker_start(confined: bool, scratch: Path) -> float:
    """course.labs.remote.Worker started (bwrap when confined) until it says ready, then stopped."""
    def once():
        worker = Worker([], scratch, confined=confined)
        try:
            worker.ensure_running()
        finally:
            worker.stop()
    return best_time(once, repeats=3)


def build_class(lab_id: str, students: int, folder: Path) -> None:
    lab = load_lab(LABS_DIR / f"{lab_id}.ipynb")
    source = inspect.getsource(importlib.import_module(lab.solution_module))
    keys = [cell_key(c) for _, c in lab.exercises()]
    for n in range(students):
        nb = nbformat.read(lab.path, as_version=4)
        solved = keys if n % 2 == 0 else keys[: max(1, len(keys) // 2)]
        for cell in nb.cells:
            if cell_kind(cell) == "exercise" and cell_key(cell) in solved:
                # the module's source, not an import of it (an import is graded as the stub)
                cell.source = source
        nbformat.write(nb, folder / f"student{n:03d}.ipynb")


def grade_once(folder: Path, jobs: int, timeout: float, unconfined: bool = False) -> float:
    out = folder.parent / f"out-{jobs}-{'u' if unconfined else 'c'}"
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        course.grade.main([str(folder), "--jobs", str(jobs), "--timeout", str(timeout), "--output", str(out)]
                          + (["--unconfined"] if unconfined else []))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=8)
    parser.add_argument("--lab", default="01_agent_loop_lab")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "submissions"
        folder.mkdir()
        build_class(args.lab, args.students, folder)
        top = ceiling()
        print(f"ceiling: two CPU-bound processes side by side vs one after another: {top:.2f}x")
        print(f"{args.students} notebooks of {args.lab}, one fresh kernel each "
              f"({course.grade.default_jobs()} cores here)")
        print(f"{'jobs':>4} {'seconds':>8} {'s/run':>6} {'runs/min':>9} {'speed-up':>9} {'of ceiling':>10}")
        first = None
        one_job = None
        for jobs in args.jobs:
            seconds = grade_once(folder, jobs, args.timeout)
            first = first or seconds
            one_job = seconds if jobs == 1 else one_job
            print(f"{jobs:>4} {seconds:8.1f} {seconds / args.students:6.2f} "
                  f"{args.students / seconds * 60:9.1f} {first / seconds:8.2f}x "
                  f"{first / seconds / top:9.0%}", flush=True)
        # the per-notebook cost and its parts, one job, confined vs --unconfined
        floor = kernel_floor()
        scratch = Path(tmp) / "scratch"
        scratch.mkdir()
        starts = {True: worker_start(True, scratch), False: worker_start(False, scratch)}
        totals = {True: one_job, False: None}
        for confined in (True, False):
            if totals[confined] is None:
                totals[confined] = grade_once(folder, 1, args.timeout, unconfined=not confined)
        print("per notebook (1 job), seconds:")
        print(f"{'':>11} {'kernel':>7} {'worker':>7} {'checks':>7} {'total':>7}")
        for confined in (True, False):
            total = totals[confined] / args.students
            rest = total - floor - starts[confined]
            name = "confined" if confined else "unconfined"
            print(f"{name:>11} {floor:7.2f} {starts[confined]:7.2f} {rest:7.2f} {total:7.2f}", flush=True)


if __name__ == "__main__":
    main()
