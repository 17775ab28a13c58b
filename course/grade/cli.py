"""The command line: `python -m course.grade SUBMISSIONS_DIR [options]` and
`python -m course.grade merge DIR... --output DIR` (the package's docstring is the help)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from course import reflections
from course.grade.feedback import FEEDBACK_DIR
from course.grade.gradebook import lab_info, write_gradebook
from course.grade.nbval_engine import GRADED_DIR, grade_all_nbval
from course.grade.shards import merge, parse_shard, shard_of
from course.grade.submissions import GRADED_MARK, collect, match_all
from course.labs import LabError, confinement, find_released_labs
from course.paths import LABS_DIR, LESSONS_DIR

DEFAULT_LABS = LABS_DIR
DEFAULT_LESSONS = LESSONS_DIR


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["merge"]:
        return main_merge(argv[1:])
    from course import grade  # its docstring is the help; imported here, once it is whole

    parser = argparse.ArgumentParser(prog="python -m course.grade", description=grade.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path, help="folder of student submissions")
    parser.add_argument("--labs", type=Path, default=DEFAULT_LABS, help="folder of released labs")
    parser.add_argument("--lessons", type=Path, default=DEFAULT_LESSONS,
                        help="folder of released lessons (a student's copy of one is collected as "
                             "reflections, not graded)")
    parser.add_argument("--lab", help="grade only this lab id (others are reported as wrong lab)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per cell (default 60)")
    parser.add_argument("--notebook-timeout", type=float, metavar="SECONDS",
                        help="seconds for all the cells of one notebook together (default: 300, or "
                             "5 x --timeout if more); once spent, the notebook's remaining checks "
                             "fail at once as timeouts, saying so")
    parser.add_argument("--jobs", type=int, default=default_jobs(),
                        help="notebooks graded at a time (default: the number of cores)")
    parser.add_argument("--shard", type=parse_shard, metavar="K/N",
                        help="grade only the K-th of N parts of the class (needs --output)")
    parser.add_argument("--output", "--out", dest="output", type=Path,
                        help="where to write the gradebook (default: the submissions folder)")
    parser.add_argument("--engine", help=argparse.SUPPRESS)  # gone: said so below, not "unknown"
    parser.add_argument("--unconfined", action="store_true",
                        help="run the submissions' code without the sandbox, with your own rights "
                             "(only where bubblewrap cannot work; the gradebook says so)")
    args = parser.parse_args(argv)

    if args.engine not in (None, "nbval"):
        parser.error(f"--engine {args.engine} is gone: grading has one path, each graded copy run "
                     f"by pytest and strict nbval against the lab's answer key (leave --engine out)")
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder")
    if args.shard and not args.output:
        parser.error("--shard needs --output DIR (one folder per shard, for `merge`)")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.notebook_timeout is not None and args.notebook_timeout <= 0:
        parser.error("--notebook-timeout must be more than 0")
    try:
        labs = find_released_labs(args.labs)
    except LabError as exc:
        parser.error(f"a released lab is broken: {exc}")
    if not labs:
        parser.error(f"no released labs (*_lab.ipynb) in {args.labs}")
    if args.lab and args.lab not in labs:
        parser.error(f"unknown lab {args.lab!r}; released: {', '.join(sorted(labs))}")
    out = args.output or args.submissions
    for name in (GRADED_DIR, FEEDBACK_DIR):  # refused before grading, not after
        if (out / name).exists() and not (out / name / GRADED_MARK).is_file():
            parser.error(f"{out / name} exists and was not written by course.grade (a student's "
                         f"folder?): grade with --output DIR, the grader writes {name}/ there")
    skipped: list[str] = []
    subs = collect(args.submissions, skip=(out,), skipped=skipped)
    shard = None
    if args.shard:
        k, n = args.shard
        shard = f"{k}/{n}"
        subs = [s for s in subs if shard_of(s.student, n) == k]
        print(f"Shard {shard}: {len({s.student for s in subs})} students.")
    if not subs:
        print(f"No submissions in {args.submissions}.")
    match_all(subs, args.submissions, labs, args.lab, reflections.find_released_lessons(args.lessons))
    confined = not args.unconfined
    in_worker = [s for s in subs if s.lab and not s.problem and labs[s.lab].in_worker]
    if confined and in_worker and confinement.problem():
        parser.error(confinement.problem())
    grade_all_nbval(subs, args.submissions, labs, args.timeout, args.jobs, out, confined=confined,
                    notebook_timeout=args.notebook_timeout)
    paths = write_gradebook(subs, lab_info(labs, subs), out, shard, skipped)
    print(f"\nWrote {', '.join(str(p) for p in paths)}")
    return 0


def main_merge(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.grade merge",
                                     description="Combine shard gradebooks (from --shard K/N "
                                                 "--output DIR) into one.")
    parser.add_argument("folders", type=Path, nargs="+", help="the shards' --output folders")
    parser.add_argument("--output", "--out", dest="output", type=Path, default=Path("."),
                        help="where to write the merged gradebook (default: here)")
    parser.add_argument("--unconfined", action="store_true",
                        help="run the submissions' code without the sandbox, with your own rights "
                             "(only where bubblewrap cannot work; the gradebook says so)")
    args = parser.parse_args(argv)
    paths = merge(args.folders, args.output)
    print(f"Merged {len(args.folders)} shards. Wrote {', '.join(str(p) for p in paths)}")
    return 0
