"""Deadlines and the late policy (`--deadlines deadlines.csv --late-policy POLICY`), applied from
the times `python -m course.collect` recorded in the submissions folder's manifest (a file's
time once copied is the copy's, not the student's).

deadlines.csv has the columns `lab`, `deadline`, `student`, `extension`: a row without a
student is the lab's deadline (ISO 8601 with its time zone, `2026-10-01T23:59+02:00`); a row
with one is that student's extension of that lab, either a number of days (`extension`) or a
deadline of their own (`deadline`).

The policy: `10%/day` (a tenth of the lab's raw score per started day late), `10%/day,max=50%`
(never more than half), `not-accepted` (late work scores 0) or `report` (the default: late work
is listed, nothing taken). The gradebook shows each late lab's raw score, penalty, final score
and why."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from course.grade.sheets import SheetError, read_sheet, where
from course.labs import whole

_POLICY = re.compile(r"^(\d+(?:\.\d+)?)%/day(?:,max=(\d+(?:\.\d+)?)%)?$")


@dataclass(frozen=True)
class LatePolicy:
    per_day: float = 0.0      # percent of the raw score per started day late
    cap: float = 100.0        # at most this percent
    accepted: bool = True     # False: late work scores 0
    text: str = "report"

    def percent(self, days: int) -> float:
        return 100.0 if not self.accepted else min(self.cap, self.per_day * days)


def parse_policy(text: str) -> LatePolicy:
    """The policy `--late-policy` names; ValueError with the accepted forms."""
    text = text.strip()
    if text == "report":
        return LatePolicy()
    if text == "not-accepted":
        return LatePolicy(accepted=False, text=text)
    match = _POLICY.match(text.replace(" ", ""))
    if not match or not 0 <= float(match.group(2) or 100) <= 100:
        raise ValueError(f"--late-policy takes 10%/day, 10%/day,max=50%, not-accepted or report; got {text!r}")
    return LatePolicy(float(match.group(1)), float(match.group(2) or 100), True, text)


def parse_time(text: str, what: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise SheetError(f"{what}: {text!r} is not a date and time (ISO 8601: 2026-10-01T23:59+02:00)") from None
    if when.tzinfo is None:
        raise SheetError(f"{what}: {text!r} has no time zone (write 2026-10-01T23:59+02:00, or Z for UTC)")
    return when


@dataclass
class Deadlines:
    labs: dict[str, datetime]
    own: dict[tuple[str, str], datetime]  # (student, lab) -> that student's deadline

    def of(self, student: str, lab: str) -> tuple[datetime | None, str]:
        """A student's deadline for a lab, and how it was extended ("" when it was not)."""
        if (student, lab) in self.own:
            return self.own[(student, lab)], f"extended to {_shown(self.own[(student, lab)])}"
        return self.labs.get(lab), ""


def read_deadlines(path: Path, lab_ids: set[str] | None = None) -> Deadlines:
    """The deadlines sheet; SheetError for an unknown lab (when `lab_ids` is given), a
    student's extension of a lab with no deadline, or a row that is neither."""
    rows = read_sheet(path, ("lab", "deadline"), ("student", "extension"))
    labs: dict[str, datetime] = {}
    for row in rows:
        if lab_ids is not None and row["lab"] not in lab_ids:
            raise SheetError(f"{where(path, row)}: no released lab {row['lab']!r} ({', '.join(sorted(lab_ids))})")
        if not row.get("student"):
            if not row["deadline"] or row.get("extension"):
                raise SheetError(f"{where(path, row)}: a lab's row gives its deadline, and no extension")
            labs[row["lab"]] = parse_time(row["deadline"], where(path, row))
    own = {}
    for row in (r for r in rows if r.get("student")):
        if row["lab"] not in labs:
            raise SheetError(f"{where(path, row)}: an extension of {row['lab']}, which has no deadline row")
        if bool(row["deadline"]) == bool(row.get("extension")):
            raise SheetError(f"{where(path, row)}: a student's row gives either a number of days "
                             f"(extension) or their own deadline, one of them")
        if row["deadline"]:
            own[(row["student"], row["lab"])] = parse_time(row["deadline"], where(path, row))
            continue
        try:
            days = float(row["extension"])
        except ValueError:
            raise SheetError(f"{where(path, row)}: extension {row['extension']!r} is not a number of days") from None
        own[(row["student"], row["lab"])] = labs[row["lab"]] + timedelta(days=days)
    return Deadlines(labs, own)


def _shown(when: datetime) -> str:
    return when.isoformat(timespec="minutes")


def days_late(handed_in: datetime, deadline: datetime) -> int:
    """Started days after the deadline: a minute late is one day, 24 hours and a minute two."""
    seconds = (handed_in - deadline).total_seconds()
    return math.ceil(seconds / 86400) if seconds > 0 else 0


def apply_late(subs, deadlines: Deadlines, policy: LatePolicy, times: dict[str, datetime]) -> None:
    """Set each graded submission's `late` record and `penalty` (points off its raw score) from
    the time its file was handed in (`times`: notebook path -> the manifest's time)."""
    for sub in subs:
        if not sub.lab or sub.problem:
            continue
        deadline, extended = deadlines.of(sub.student, sub.lab)
        if deadline is None:
            continue
        handed_in = times.get(sub.notebook)
        if handed_in is None:
            sub.notes.append("the collect manifest has no time for this notebook: no late policy applied")
            continue
        days = days_late(handed_in, deadline)
        if not days:
            continue
        percent = policy.percent(days)
        raw = sub.earned
        sub.penalty = whole(round(raw * percent / 100, 2))
        rule = ("late work is not accepted" if not policy.accepted else
                f"{policy.text}: {whole(percent)}% of the raw score" if policy.per_day else
                "the late policy only reports it")
        sub.late = {"handed_in": _shown(handed_in), "deadline": _shown(deadline), "days": days,
                    "why": f"handed in {_shown(handed_in)}, {days} day{'s' * (days > 1)} after the "
                           f"deadline {_shown(deadline)}{f' ({extended})' if extended else ''}: {rule}"}
