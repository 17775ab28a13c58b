"""Grading throughput: lab runs graded per minute with 1 and with 2 jobs. Prints figures;
asserts nothing.

    python benchmarks/bench_grading.py [--students 8] [--lab 01_agent_loop_lab] [--jobs 1 2]

Builds a class of `--students` copies of one released lab, half of them solved with the
reference solution (every check runs to its end) and half half-solved (some checks fail), then
grades it with `course.grade` at each `--jobs`, with each engine (nbval, the default, and the
kernel driven directly), and prints runs per minute and the speed-up over one job. Each graded notebook is a fresh kernel, so the figures include kernel start-up; on a
busy machine compare the ratio, not the absolute numbers.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import tempfile
import time
from pathlib import Path

import nbformat

import course.grade
from course.labs import cell_key, cell_kind, load_lab
from course.paths import LABS_DIR


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


def grade_once(folder: Path, jobs: int, timeout: float, engine: str) -> float:
    out = folder.parent / f"out-{engine}-{jobs}"
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        course.grade.main([str(folder), "--jobs", str(jobs), "--timeout", str(timeout), "--output", str(out),
                           "--engine", engine])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=8)
    parser.add_argument("--lab", default="01_agent_loop_lab")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--engine", choices=("nbval", "kernel"), nargs="+", default=["nbval", "kernel"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "submissions"
        folder.mkdir()
        build_class(args.lab, args.students, folder)
        print(f"{args.students} notebooks of {args.lab}, one fresh kernel each "
              f"({course.grade.default_jobs()} cores here)")
        print(f"{'engine':>7} {'jobs':>4} {'seconds':>8} {'s/run':>6} {'runs/min':>9} {'speed-up':>9}")
        for engine in args.engine:
            first = None
            for jobs in args.jobs:
                seconds = grade_once(folder, jobs, args.timeout, engine)
                first = first or seconds
                print(f"{engine:>7} {jobs:>4} {seconds:8.1f} {seconds / args.students:6.2f} "
                      f"{args.students / seconds * 60:9.1f} {first / seconds:8.2f}x", flush=True)


if __name__ == "__main__":
    main()
