"""The capstone's grading time per student (issue 53): `python -m course.grade` on a class of one
played student (tests/labs/test_grade_capstone.py's, on lab 19 as released: capping, fencing and
the stable window right, notes that know only the desk's words), on the whole development and
hidden sets. Prints times, asserts nothing.

    .venv/bin/python benchmarks/bench_grade_capstone.py [--tasks N] [--size TURNS] [--in-process]

The class is graded twice into one output folder: the first run also computes the baselines
(once per hidden set: cached by digest in capstone-baselines.json), the second finds them cached,
so its time is what one more student costs. --in-process: the same student's manager also run
on the same sets in this process, without the worker (the wire's and the worker's share).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a clone without installing
from course.grade import main  # noqa: E402
from tests.labs.test_grade_capstone import LAB_ID, class_lab, hand_in  # noqa: E402


def grade(subs: Path, labs: Path, out: Path, options: list[str]) -> tuple[float, str]:
    printed = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(printed):
        main([str(subs), "--labs", str(labs), "--output", str(out), "--jobs", "1", *options])
    return time.perf_counter() - start, printed.getvalue()


def in_process(sets, lab, played) -> float:
    """The played student's program (the lab's set-up and their cells) run here, its
    next_request called directly on both sets."""
    from course.givens.capstone import evaluate
    from course.grade.capstone import capstone_job
    from course.labs import load_lab
    from course.llm import serve

    with tempfile.TemporaryDirectory() as folder:
        nbformat.write(lab, Path(folder) / f"{LAB_ID}.ipynb")
        job = capstone_job(load_lab(Path(folder) / f"{LAB_ID}.ipynb"), hand_in(lab, played), False, sets)
    namespace: dict = {}
    for cell in job["cells"][1:]:  # the guard against the answers' compiled code is the worker's
        exec(cell["source"], namespace)  # noqa: S102 - the course's own played student, for a timing
    start = time.perf_counter()
    for tasks in (sets.dev_tasks(), sets.hidden_tasks()):
        with serve() as server:
            evaluate(namespace["next_request"], tasks, server.client())
    return time.perf_counter() - start


def main_bench() -> None:
    from course.grade.capstone import Sets

    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int)
    parser.add_argument("--size", type=int)
    parser.add_argument("--in-process", action="store_true")
    args = parser.parse_args()
    options = (["--capstone-tasks", str(args.tasks)] if args.tasks else []) + \
              (["--capstone-size", str(args.size)] if args.size else [])
    sets = Sets(tasks=args.tasks, size=args.size)
    with tempfile.TemporaryDirectory(prefix="bench-grade-capstone-") as work:
        work = Path(work)
        labs, subs, out = work / "labs", work / "class", work / "out"
        labs.mkdir()
        (subs / "played").mkdir(parents=True)
        lab, played = class_lab()
        nbformat.write(lab, labs / f"{LAB_ID}.ipynb")
        nbformat.write(hand_in(lab, played), subs / "played" / f"{LAB_ID}.ipynb")
        first, _ = grade(subs, labs, out, options)
        second, printed = grade(subs, labs, out, options)
    print(f"sets: {len(sets.dev_tasks())} development and {len(sets.hidden_tasks())} hidden tasks, "
          f"{'full size' if args.size is None else f'{args.size} turns each'}, 2 trials each")
    print(f"one student, baselines cached: {second:.1f} s (lab checks by nbval, then the capstone)")
    print(f"the first run, which also computed the baselines (naive, assembled): {first:.1f} s; "
          f"the baselines' share: {first - second:.1f} s, once per hidden set")
    print("".join(line + "\n" for line in printed.splitlines() if line.startswith(("[1/1]", "[capstone"))),
          end="")
    if args.in_process:
        here = in_process(sets, lab, played)
        print(f"the same manager in-process on both sets: {here:.1f} s")


if __name__ == "__main__":
    main_bench()
