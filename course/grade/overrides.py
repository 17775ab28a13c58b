"""The instructor's overrides (`--overrides overrides.csv`): a check's verdict or points for one
student's lab, with the reason, applied each time that lab is graded and listed in the gradebook
with its reason (what grading said stays in the record: `was`).

overrides.csv has the columns `student`, `lab`, `check`, `verdict` (pass or fail), `points`
(the points to give; a pass alone gives the check's full points) and `reason` (required)."""
from __future__ import annotations

from pathlib import Path

from course.grade.sheets import SheetError, read_sheet, where
from course.labs import Lab, cell_key, cell_points, whole

COLUMNS = ("student", "lab", "check", "reason")
VERDICTS = ("pass", "fail")


def read_overrides(path: Path, labs: dict[str, Lab]) -> list[dict]:
    """The overrides, each checked against the released labs: SheetError for an unknown lab or
    check, points out of the check's range, no verdict nor points, or no reason."""
    found, seen = [], {}
    for row in read_sheet(path, COLUMNS, ("verdict", "points")):
        here = where(path, row)
        lab = labs.get(row["lab"])
        if lab is None:
            raise SheetError(f"{here}: no released lab {row['lab']!r}")
        worth = {cell_key(c): cell_points(c) for _, c in lab.checks()}
        if row["check"] not in worth:
            raise SheetError(f"{here}: {row['lab']} has no check {row['check']!r} ({', '.join(worth)})")
        if not row["reason"]:
            raise SheetError(f"{here}: an override needs its reason (it is shown to the student)")
        verdict, points = row.get("verdict", "").lower(), row.get("points", "")
        if verdict and verdict not in VERDICTS:
            raise SheetError(f"{here}: verdict {row['verdict']!r} is neither pass nor fail")
        if not verdict and not points:
            raise SheetError(f"{here}: give a verdict (pass or fail), points, or both")
        if points:
            try:
                earned = whole(float(points))
            except ValueError:
                raise SheetError(f"{here}: points {points!r} is not a number") from None
            if not 0 <= earned <= worth[row["check"]]:
                raise SheetError(f"{here}: points {points} is outside 0 to {worth[row['check']]}, "
                                 f"what {row['check']} is worth")
        else:
            earned = worth[row["check"]] if verdict == "pass" else 0
        key = (row["student"], row["lab"], row["check"])
        if key in seen:
            raise SheetError(f"{here}: the same check is overridden on line {seen[key]}")
        seen[key] = row["line"]
        found.append({"student": row["student"], "lab": row["lab"], "check": row["check"],
                      "status": verdict or ("pass" if earned == worth[row["check"]] else "partial"),
                      "earned": earned, "reason": row["reason"], "line": row["line"]})
    return found


def unknown_students(overrides: list[dict], subs, path: Path) -> None:
    """SheetError for an override of a lab no submission of that student was matched to."""
    have = {(s.student, s.lab) for s in subs if s.lab}
    for o in overrides:
        if (o["student"], o["lab"]) not in have:
            raise SheetError(f"{path}, line {o['line']}: {o['student']!r} handed in no notebook of {o['lab']}")


def apply_overrides(subs, overrides: list[dict]) -> None:
    """Change the rows the overrides name, recording on each submission what was overridden."""
    for sub in subs:
        if not sub.lab or sub.problem:
            continue
        for o in (o for o in overrides if (o["student"], o["lab"]) == (sub.student, sub.lab)):
            row = next((r for r in sub.rows if r["check"] == o["check"]), None)
            if row is None:
                continue
            was = f"{row['status']}, {row['earned']} / {row['points']}"
            row.update(status=o["status"], earned=o["earned"],
                       detail=f"overridden by the instructor: {o['reason']} (graded: {row['status']}"
                              f"{': ' + row['detail'] if row['detail'] else ''})")
            sub.overrides.append({"check": o["check"], "was": was,
                                  "now": f"{o['status']}, {o['earned']} / {row['points']}",
                                  "reason": o["reason"]})
