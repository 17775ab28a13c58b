"""The command line: `python -m course.grade SUBMISSIONS_DIR [options]` and
`python -m course.grade merge DIR... --output DIR` (the package's docstring is the help)."""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from course import reflections
from course.grade.capstone import BUDGET, CALL_TIMEOUT, Sets, grade_capstones, is_capstone
from course.grade.feedback import FEEDBACK_DIR
from course.grade.gradebook import lab_info, write_gradebook
from course.grade.nbval_engine import GRADED_DIR, grade_all_nbval
from course.grade.shards import merge, parse_shard, shard_of
from course.grade.export import FORMATS, write_export
from course.grade.give_back import give_back
from course.grade.late import Deadlines, LatePolicy, apply_late, parse_policy, read_deadlines
from course.grade.overrides import apply_overrides, read_overrides, unknown_students
from course.grade.roster import from_records, read_roster, unmatched
from course.grade.rubric import apply_rubric, read_rubric_scores, rubric_worth, unknown_answers
from course.grade.sheets import SheetError
from course.grade.similarity import DEFAULT_THRESHOLD, similar_pairs, write_report
from course.grade.submissions import GRADED_MARK, MANIFEST, Submission, collect, match_all
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
    if argv[:1] == ["give-back"]:
        return main_give_back(argv[1:])
    if argv[:1] == ["export"]:
        return main_export(argv[1:])
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
    term = parser.add_argument_group("the whole term (INSTRUCTORS.md, \"The whole term\")")
    term.add_argument("--roster", type=Path, metavar="CSV",
                      help="the class: columns student_id, name, email, folder; a student who handed "
                           "in nothing gets a row (0, not handed in), work matching no roster line "
                           "is reported")
    term.add_argument("--deadlines", type=Path, metavar="CSV",
                      help="columns lab, deadline (ISO 8601 with its time zone) and, for a "
                           "student's extension, student and extension (days) or their own "
                           "deadline; applied from the times in SUBMISSIONS/collect-manifest.json "
                           "(python -m course.collect)")
    term.add_argument("--late-policy", type=_policy, metavar="POLICY",
                      help="10%%/day (of the lab's raw score per started day late), "
                           "10%%/day,max=50%% (capped), not-accepted (late work scores 0) or "
                           "report (the default: listed, nothing taken); needs --deadlines")
    term.add_argument("--overrides", type=Path, metavar="CSV",
                      help="columns student, lab, check, verdict (pass/fail) and/or points, reason: "
                           "applied to the checks they name, listed in the gradebook with the reason")
    term.add_argument("--rubric-scores", type=Path, metavar="CSV",
                      help="columns student, lesson, question (the answer cell's key, think-1), "
                           "points, out_of and optionally comment and rubric: the lessons' reflections "
                           "scored, added to the total and shown in the feedback")
    term.add_argument("--only", metavar="STUDENT_OR_LAB",
                      help="regrade one student (their folder name) or one lab into the gradebook "
                           "already in --output: only those rows change")
    term.add_argument("--similarity", type=float, nargs="?", const=DEFAULT_THRESHOLD, metavar="THRESHOLD",
                      help="also write similarity.md: per lab, the pairs of submissions whose exercise "
                           f"code is at least THRESHOLD alike (default {DEFAULT_THRESHOLD}), with the "
                           "lines they share (copydetect; the stubs left out); changes no score")
    term.add_argument("--export", choices=FORMATS, action="append", default=[],
                      help="also write export-canvas.csv or export-moodle.csv: a row per roster "
                           "student, a column per lab, the total (needs --roster; repeatable)")
    term.add_argument("--give-back", type=Path, metavar="HOMES",
                      help="copy each student's feedback file and graded notebooks into a new "
                           "course-feedback/ folder in HOMES/<student>/ (never over their files)")
    capstone = parser.add_argument_group("the capstone (INSTRUCTORS.md, \"The capstone\")")
    capstone.add_argument("--capstone-hidden", type=Path, metavar="FILE",
                          help="the hidden set's seeds and surface forms (default: "
                               "docs/instructors/capstone_hidden.json)")
    capstone.add_argument("--capstone-budget", type=float, default=BUDGET, metavar="SECONDS",
                          help=f"CPU seconds a student's manager may spend in its worker over both sets "
                               f"(default {BUDGET}); once spent, its remaining runs fail")
    capstone.add_argument("--capstone-call-timeout", type=float, default=CALL_TIMEOUT, metavar="SECONDS",
                          help=f"seconds one call of a student's manager may take (default {CALL_TIMEOUT})")
    capstone.add_argument("--capstone-tasks", type=int, metavar="N",
                          help="a trial run: only the first N tasks of each set (not the term's scores)")
    capstone.add_argument("--capstone-size", type=int, metavar="TURNS",
                          help="a trial run: TURNS user turns per task (not the term's scores)")
    capstone.add_argument("--no-capstone", action="store_true",
                          help="grade the capstone lab's checks only, without running managers on the "
                               "hidden set")
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
    if (args.capstone_tasks or 1) < 1 or (args.capstone_size or 5) < 5 or args.capstone_budget <= 0 \
            or args.capstone_call_timeout <= 0:
        parser.error("--capstone-tasks must be at least 1, --capstone-size at least 5 (a task has up to "
                     "5 sessions), --capstone-budget and --capstone-call-timeout more than 0")
    sets = Sets(hidden=str(args.capstone_hidden or ""), tasks=args.capstone_tasks, size=args.capstone_size,
                budget=args.capstone_budget, call_timeout=args.capstone_call_timeout)
    try:
        sheets = read_term_sheets(args, labs)
    except (SheetError, ValueError) as exc:
        parser.error(str(exc))
    previous = None
    if args.only:
        try:
            previous = json.loads((out / "gradebook.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            parser.error(f"--only regrades into a gradebook: no readable {out / 'gradebook.json'} "
                         f"(grade the class first, with the same --output)")
        if args.shard:
            parser.error("--only and --shard do not go together: regrade into the merged gradebook")
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
    if args.only:
        subs = [s for s in subs if args.only in (s.student, s.lab)]
        if not subs:
            parser.error(f"--only {args.only}: no student folder and no lab of that name was handed in")
    if not args.no_capstone and any(s.lab and not s.problem and is_capstone(labs[s.lab]) for s in subs) \
            and not sets.hidden_path().is_file():
        parser.error(f"the capstone's hidden set {sets.hidden_path()} is missing (an instructor's file, "
                     f"never released): pass --capstone-hidden FILE, or --no-capstone to grade the "
                     f"capstone lab's checks only")
    everyone = subs + ([Submission(**x) for x in previous["submissions"]] if args.only else [])
    try:
        if sheets.overrides:
            unknown_students(sheets.overrides, everyone, args.overrides)
        if sheets.scores:
            unknown_answers(sheets.scores, everyone, args.rubric_scores)
    except SheetError as exc:
        parser.error(str(exc))
    confined = not args.unconfined
    in_worker = [s for s in subs if s.lab and not s.problem and labs[s.lab].in_worker]
    if confined and in_worker and confinement.problem():
        parser.error(confinement.problem())
    adjusted = set()

    def adjust(sub):
        adjusted.add(id(sub))
        apply_overrides([sub], sheets.overrides)
        apply_rubric([sub], sheets.scores)
        if sheets.deadlines:
            apply_late([sub], sheets.deadlines, sheets.policy, sheets.times)

    grade_all_nbval(subs, args.submissions, labs, args.timeout, args.jobs, out, confined=confined,
                    notebook_timeout=args.notebook_timeout, adjust=adjust, partial=bool(args.only))
    for sub in subs:
        if id(sub) not in adjusted:
            adjust(sub)
    section = None if args.no_capstone else grade_capstones(subs, args.submissions, labs, sets, args.jobs,
                                                           out, confined)
    info, skipped_all = lab_info(labs, subs), skipped
    roster, rubric = sheets.roster, rubric_worth(sheets.worth)
    if previous is not None:  # the other rows as they were
        subs = [Submission(**x) for x in previous["submissions"] if args.only not in (x["student"], x["lab"])] + subs
        info = {**previous["labs"], **info}
        skipped_all = sorted(set(previous.get("skipped", [])) | set(skipped))
        roster = roster or from_records(previous.get("roster") or [])
        rubric = rubric or previous.get("rubric") or []
        section = section or previous.get("capstone")
    if shard and roster:
        roster = [p for p in roster if shard_of(p.folder, args.shard[1]) == args.shard[0]]
    strangers = unmatched(roster, {s.student for s in subs}) if roster else []
    if strangers:
        print(f"\nNot on the roster (graded, listed in gradebook.md): {', '.join(strangers)}")
    paths = write_gradebook(subs, dict(sorted(info.items())), out, shard, skipped_all, roster, rubric, section)
    if args.similarity is not None:
        paths.append(write_report(similar_pairs(subs, args.submissions, labs, args.similarity),
                                  args.similarity, out))
    print(f"\nWrote {', '.join(str(p) for p in paths)}")
    return after_gradebook(out, args.export, args.give_back)


def _policy(text: str) -> LatePolicy:
    try:
        return parse_policy(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@dataclass
class TermSheets:
    roster: list = field(default_factory=list)
    overrides: list = field(default_factory=list)
    deadlines: Deadlines | None = None
    policy: LatePolicy = LatePolicy()
    times: dict = field(default_factory=dict)
    scores: list = field(default_factory=list)
    worth: dict = field(default_factory=dict)


def read_term_sheets(args, labs) -> TermSheets:
    """The instructor's sheets, read (and checked) before anything is graded."""
    from course.collect import read_manifest  # course.collect imports course.grade's parts

    sheets = TermSheets()
    if args.roster:
        sheets.roster = read_roster(args.roster)
    if args.overrides:
        sheets.overrides = read_overrides(args.overrides, labs)
    if args.rubric_scores:
        sheets.scores, sheets.worth = read_rubric_scores(args.rubric_scores)
    if args.late_policy and not args.deadlines:
        raise ValueError("--late-policy needs --deadlines (a deadlines sheet)")
    if args.deadlines:
        sheets.deadlines = read_deadlines(args.deadlines, set(labs))
        sheets.policy = args.late_policy or LatePolicy()
        try:
            sheets.times = read_manifest(args.submissions)
        except FileNotFoundError:
            raise ValueError(f"--deadlines needs the times the notebooks were handed in: "
                             f"{args.submissions / MANIFEST} is missing (collect the class with "
                             f"python -m course.collect HOMES --out {args.submissions})") from None
    return sheets


def after_gradebook(out: Path, exports: list[str], homes: Path | None) -> int:
    """--export and --give-back, from the gradebook just written (as the subcommands do)."""
    data = json.loads((out / "gradebook.json").read_text(encoding="utf-8"))
    for fmt in exports:
        try:
            path, left_out = write_export(data, fmt, out)
        except ValueError as exc:
            print(f"course.grade: {exc}", file=sys.stderr)
            return 2
        print(f"Wrote {path}" + (f" (not on the roster, left out: {', '.join(left_out)})" if left_out else ""))
    if homes is not None:
        students = sorted({s["student"] for s in data["submissions"]} | {p["folder"] for p in data.get("roster") or []})
        for line in give_back(out, homes, students):
            print(line)
    return 0


def main_give_back(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.grade give-back",
                                     description="Copy each student's feedback file and graded notebooks "
                                                 "from a gradebook's folder into a new course-feedback/ "
                                                 "folder in their home (never over their files).")
    parser.add_argument("gradebook", type=Path, help="the folder holding gradebook.json (--output of the grading)")
    parser.add_argument("homes", type=Path, help="the folder of the students' homes (or exchange folders)")
    args = parser.parse_args(argv)
    if not (args.gradebook / "gradebook.json").is_file() or not args.homes.is_dir():
        parser.error(f"needs {args.gradebook / 'gradebook.json'} and the folder {args.homes}")
    return after_gradebook(args.gradebook, [], args.homes)


def main_export(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.grade export",
                                     description="Write a gradebook's wide CSV for a learning platform: "
                                                 "a row per roster student, a column per lab, the total.")
    parser.add_argument("gradebook", type=Path, help="the folder holding gradebook.json (--output of the grading)")
    parser.add_argument("--format", choices=FORMATS, action="append", required=True, dest="formats")
    args = parser.parse_args(argv)
    if not (args.gradebook / "gradebook.json").is_file():
        parser.error(f"no {args.gradebook / 'gradebook.json'}")
    return after_gradebook(args.gradebook, args.formats, None)


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
