"""The wide CSV a learning platform imports (`--export canvas|moodle`): one row per student on
the roster, one column per lab (its final score: after the late policy and overrides; 0 for a
lab not handed in or not graded), and the total; when the capstone was graded, its hidden-set
score too (-1 to +1, not in the total). Written from gradebook.json, beside it.

The headers are the platforms' documented ones (INSTRUCTORS.md, "Export", cites the pages):
- Canvas's gradebook import reads a student by `Student` (name), `ID` (Canvas's own user id)
  or `SIS User ID`, with `SIS Login ID` and `Section` columns present; each other column is an
  assignment (a new name makes a new assignment);
- Moodle's CSV grade import lets you map a column to the user (`ID number` or `Email address`)
  and each other column to a grade item, at import time."""
from __future__ import annotations

import csv
from pathlib import Path

from course.grade.capstone import capstone_score
from course.grade.roster import from_records
from course.grade.student_text import csv_field
from course.labs import whole

FORMATS = ("canvas", "moodle")
TOTAL = "Total"
REFLECTIONS = "Reflections"  # the rubric scores of the lessons' reflections, when there are any
CAPSTONE = "Capstone hidden-set score"  # -1 to +1 (course.grade.capstone), not in the total


def identity_columns(fmt: str, person) -> dict[str, str]:
    if fmt == "canvas":
        return {"Student": person.name, "ID": "", "SIS User ID": person.student_id, "SIS Login ID": "",
                "Section": ""}
    return {"First name": person.name, "ID number": person.student_id, "Email address": person.email}


def wide_rows(data: dict, fmt: str) -> tuple[list[str], list[dict], list[str]]:
    """(header, rows, left out): a row per roster student; the students graded but on no
    roster line are left out (a platform cannot place them) and named."""
    people = from_records(data.get("roster") or [])
    if not people:
        raise ValueError("--export needs a roster (--roster roster.csv): a platform finds each "
                         "student by their id or email, which only the roster holds")
    lab_ids = sorted(data["labs"]) + ([REFLECTIONS] if data.get("rubric") else [])
    scores: dict[tuple[str, str], float] = {}
    for sub in data["submissions"]:
        if sub["lab"] and not sub["problem"]:
            raw = sum(r["earned"] for r in sub["rows"])
            scores[(sub["student"], sub["lab"])] = max(0, raw - sub.get("penalty", 0))
        elif sub["lesson"] and not sub["problem"]:
            key = (sub["student"], REFLECTIONS)
            scores[key] = scores.get(key, 0) + sum(r.get("score", 0) for r in sub["reflections"])
    capstone = {sub["student"]: capstone_score(sub.get("capstone"))
                for sub in data["submissions"] if sub.get("capstone") and not sub["problem"]}
    rows = []
    for person in people:
        marks = {lab: whole(round(scores.get((person.folder, lab), 0), 2)) for lab in lab_ids}
        rows.append({**identity_columns(fmt, person), **marks,
                     TOTAL: whole(round(sum(marks.values()), 2)),
                     **({CAPSTONE: capstone.get(person.folder, "")} if capstone else {})})
    header = list(identity_columns(fmt, people[0])) + lab_ids + [TOTAL] + ([CAPSTONE] if capstone else [])
    left_out = sorted({s["student"] for s in data["submissions"]} - {p.folder for p in people})
    return header, rows, left_out


def write_export(data: dict, fmt: str, out: Path) -> tuple[Path, list[str]]:
    """export-<fmt>.csv in `out`; and the students left out (not on the roster)."""
    header, rows, left_out = wide_rows(data, fmt)
    path = out / f"export-{fmt}.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: csv_field(v) for k, v in r.items()} for r in rows)
    return path, left_out
