"""The class roster (`--roster roster.csv`): who the students are, so that a student who handed
in nothing still has a row (0, "not handed in"), and a submission that matches nobody on it is
reported rather than quietly graded as a stranger.

The sheet's columns: `student_id`, `name`, `email`, `folder` (the name of the student's folder
in the submissions folder: their JupyterHub user name, or the exchange folder's name)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from course.grade.sheets import SheetError, read_sheet, where

COLUMNS = ("student_id", "name", "email", "folder")
NOT_HANDED_IN = "not handed in"


@dataclass(frozen=True)
class Person:
    student_id: str
    name: str
    email: str
    folder: str


def read_roster(path: Path) -> list[Person]:
    """The roster's people in its order; SheetError for a row without an id or folder, or an
    id or folder given twice."""
    people, seen = [], {}
    for row in read_sheet(path, COLUMNS):
        for column in ("student_id", "folder"):
            if not row[column]:
                raise SheetError(f"{where(path, row)}: no {column}")
            key = (column, row[column])
            if key in seen:
                raise SheetError(f"{where(path, row)}: {column} {row[column]!r} is also on line {seen[key]}")
            seen[key] = row["line"]
        people.append(Person(row["student_id"], row["name"], row["email"], row["folder"]))
    if not people:
        raise SheetError(f"{path}: no students in it")
    return people


def as_records(people: list[Person]) -> list[dict]:
    return [asdict(p) for p in people]


def from_records(records: list[dict]) -> list[Person]:
    return [Person(**r) for r in records]


def absent(people: list[Person], students: set[str]) -> list[Person]:
    """The people on the roster with no submission at all."""
    return [p for p in people if p.folder not in students]


def unmatched(people: list[Person], students: set[str]) -> list[str]:
    """The submissions' students (folder names) that are on no roster line."""
    return sorted(students - {p.folder for p in people})
