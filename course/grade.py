"""Grade a folder of student lab notebooks: `python -m course.grade SUBMISSIONS_DIR`.

SUBMISSIONS_DIR holds one entry per student: a folder (the student's name) with their lab
notebooks in it, or a single notebook file (named after the student). Each notebook is matched
to its released lab by the lab id in its metadata (or, failing that, by its file name), then
graded: the released lab's check cells are restored, each cell gets a timeout, and every check
scores its points or nothing. A broken submission is reported with its reason and never stops
the others.

Writes gradebook.csv (one row per student, lab and check) and gradebook.md (a summary) into
--out (default: SUBMISSIONS_DIR).
"""
from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass, field
from pathlib import Path

from course.labs import Lab, LabError, find_released_labs, graded, read_notebook, run
from course.paths import LABS_DIR

DEFAULT_LABS = LABS_DIR
CSV_FIELDS = ["student", "lab", "check", "status", "points", "earned", "detail"]


@dataclass
class Submission:
    student: str
    path: Path | None
    lab: Lab | None = None
    problem: str = ""  # why it could not be graded
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def collect(submissions_dir: Path) -> list[Submission]:
    """One Submission per notebook found, plus one per student with nothing gradable."""
    found = []
    for entry in sorted(submissions_dir.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            notebooks = sorted(p for p in entry.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
            if not notebooks:
                found.append(Submission(entry.name, None, problem="no .ipynb file in the folder"))
            found += [Submission(entry.name, nb) for nb in notebooks]
        elif entry.suffix == ".ipynb":
            found.append(Submission(entry.stem, entry))
        else:
            found.append(Submission(entry.stem, entry, problem=f"{entry.name} is not a notebook (.ipynb)"))
    return found


def match_lab(sub: Submission, labs: dict[str, Lab], only: str | None):
    """Read the notebook and find its released lab; record a problem instead of raising."""
    try:
        nb = read_notebook(sub.path)
    except LabError as exc:
        sub.problem = str(exc)
        return None
    lab_id = nb.metadata.get("course", {}).get("lab")
    if lab_id is None:  # metadata stripped by some editor: fall back to the file name
        lab_id = next((i for i, lab in labs.items() if lab.path.name == sub.path.name), None)
    if lab_id not in labs:
        sub.problem = (f"{sub.path.name} is not a notebook of any released lab "
                       f"(lab id {lab_id!r}; released: {', '.join(sorted(labs))})")
        return None
    if only and lab_id != only:
        sub.problem = f"{sub.path.name} is lab {lab_id}, not {only}: wrong lab submitted"
        return None
    sub.lab = labs[lab_id]
    return nb


def grade_one(sub: Submission, nb, timeout: float) -> None:
    notebook, sub.notes = graded(sub.lab, nb)
    try:
        outcome = run(sub.lab, notebook, timeout=timeout)
    except Exception as exc:  # e.g. the kernel could not start: report, keep grading others
        sub.problem = f"could not run the notebook: {type(exc).__name__}: {exc}"
        return
    for r in outcome.checks():
        status = {"passed": "pass", "failed": "fail"}.get(r.status, r.status)
        sub.rows.append({"student": sub.student, "lab": sub.lab.lab_id, "check": r.key,
                         "status": status, "points": r.points, "earned": r.earned, "detail": r.error})


def write_gradebook(subs: list[Submission], out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out / "gradebook.csv", out / "gradebook.md"
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for sub in subs:
            if sub.problem:
                writer.writerow({"student": sub.student, "lab": sub.lab.lab_id if sub.lab else "",
                                 "check": "", "status": "not graded", "points": "", "earned": 0,
                                 "detail": sub.problem})
            writer.writerows(sub.rows)
    lines = ["# Gradebook", "", "| student | lab | score | notes |", "|---|---|---|---|"]
    for sub in subs:
        if sub.problem:
            lines.append(f"| {sub.student} | {sub.lab.lab_id if sub.lab else '?'} | not graded | "
                         f"{sub.problem} |")
            continue
        earned = sum(r["earned"] for r in sub.rows)
        total = sum(r["points"] for r in sub.rows)
        failed = [f"{r['check']} ({r['status']})" for r in sub.rows if r["status"] != "pass"]
        notes = "; ".join(sub.notes + (["failed: " + ", ".join(failed)] if failed else []))
        lines.append(f"| {sub.student} | {sub.lab.lab_id} | {earned:g} / {total:g} | {notes} |")
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return csv_path, md_path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.grade", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path, help="folder of student submissions")
    parser.add_argument("--labs", type=Path, default=DEFAULT_LABS, help="folder of released labs")
    parser.add_argument("--lab", help="grade only this lab id (others are reported as wrong lab)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per cell (default 60)")
    parser.add_argument("--out", type=Path, help="where to write gradebook.csv and gradebook.md")
    args = parser.parse_args(argv)

    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder")
    try:
        labs = find_released_labs(args.labs)
    except LabError as exc:
        parser.error(f"a released lab is broken: {exc}")
    if not labs:
        parser.error(f"no released labs (*_lab.ipynb) in {args.labs}")
    if args.lab and args.lab not in labs:
        parser.error(f"unknown lab {args.lab!r}; released: {', '.join(sorted(labs))}")
    subs = collect(args.submissions)
    if not subs:
        print(f"No submissions in {args.submissions}.")
    for n, sub in enumerate(subs, 1):
        prefix = f"[{n}/{len(subs)}] {sub.student}"
        nb = None if sub.problem else match_lab(sub, labs, args.lab)
        if nb is not None:
            print(f"{prefix}: grading {sub.path.name} ({sub.lab.lab_id}) ...", flush=True)
            grade_one(sub, nb, args.timeout)
        if sub.problem:
            print(f"{prefix}: NOT GRADED - {sub.problem}", flush=True)
        else:
            earned = sum(r["earned"] for r in sub.rows)
            total = sum(r["points"] for r in sub.rows)
            print(f"{prefix}: {earned:g} / {total:g} points", flush=True)
    csv_path, md_path = write_gradebook(subs, args.out or args.submissions)
    print(f"\nWrote {csv_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
