"""The class to grade: one `Submission` per notebook found in the submissions folder
(`collect`), each matched to its released lab, or to a released lesson whose answers are
collected as reflections (`match_all`); and the gradebook row and progress line of one."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from course import reflections
from course.paths import CHINESE_EDITION
from course.labs import (Lab, LabError, cell_key, cell_points, exercises_worked, match_lab,
                         not_attempted, read_notebook, whole)

# The grader's own output: collecting skips these files and any folder holding one.
OUTPUT_FILES = ("gradebook.csv", "gradebook.md", "gradebook.json")
GRADED_MARK = ".course-graded-notebooks"


@dataclass
class Submission:
    student: str
    notebook: str               # its path inside the submissions folder ("" when there is none)
    lab: str = ""               # the released lab id it was matched to
    problem: str = ""           # why it could not be graded
    attempted: bool = True
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    lesson: str = ""            # a lesson's id ("01_agent_loop") when this is a copy of a lesson
    reflections: list[dict] = field(default_factory=list)  # its answers (course.reflections.collect)
    edition: str = ""           # the language of the edition handed in: "en" or "zh-CN"

    @property
    def earned(self):
        return whole(sum(r["earned"] for r in self.rows))

    @property
    def points(self):
        return whole(sum(r["points"] for r in self.rows if r["points"] != ""))


def is_output_folder(folder: Path) -> bool:
    return any((folder / name).is_file() for name in OUTPUT_FILES + (GRADED_MARK,))


def collect(submissions_dir: Path, skip: tuple[Path, ...] = ()) -> list[Submission]:
    """One Submission per notebook found, plus one per student with nothing gradable.

    Skipped: hidden entries, the gradebook's own files, any output folder (one holding a
    gradebook) and the folders in `skip`.
    """
    skip = tuple(p.resolve() for p in skip)
    found = []
    for entry in sorted(submissions_dir.iterdir()):
        if entry.name.startswith(".") or entry.name in OUTPUT_FILES or entry.name == "__pycache__":
            continue
        if entry.is_dir():
            if entry.resolve() in skip or is_output_folder(entry):
                continue
            notebooks = sorted(p for p in entry.rglob("*.ipynb")
                               if not any(part.startswith(".") for part in p.relative_to(entry).parts))
            if not notebooks:
                found.append(Submission(entry.name, entry.name + "/", problem="no .ipynb file in the folder"))
            found += [Submission(entry.name, p.relative_to(submissions_dir).as_posix()) for p in notebooks]
        elif entry.suffix == ".ipynb":
            found.append(Submission(entry.stem, entry.name))
        else:
            found.append(Submission(entry.stem, entry.name, problem=f"{entry.name} is not a notebook (.ipynb)"))
    return found


def match_all(subs: list[Submission], root: Path, labs: dict[str, Lab], only: str | None,
              lessons: dict[str, Path] | None = None) -> None:
    """Find each notebook's lab (or the reason it has none). When a student has several
    notebooks of one lab (`X.ipynb` beside `X-Copy1.ipynb`), one is graded (`pick_one`) and
    the gradebook says which and why. A copy of a lesson (named like a released one in
    `lessons`, with no lab id in its metadata) is not graded: its answer cells are collected as
    reflections."""
    groups: dict[tuple[str, str], list[tuple[Submission, object]]] = {}
    for sub in subs:
        if sub.problem:
            continue
        try:
            nb = read_notebook(root / sub.notebook)
            sub.edition = _edition_of(nb)
            name = Path(sub.notebook).name
            if lessons and name in lessons and not nb.metadata.get("course", {}).get("lab"):
                collect_reflections(sub, nb, lessons[name])
                continue
            lab = match_lab(root / sub.notebook, nb, labs, only)
        except LabError as exc:
            sub.problem = str(exc)
            continue
        sub.lab = lab.lab_id
        groups.setdefault((sub.student, lab.lab_id), []).append((sub, nb))
    for (_, lab_id), group in groups.items():
        lab = labs[lab_id]
        chosen, nb, why = pick_one(lab, group, root)
        for sub, _ in group:
            if sub is not chosen:
                sub.problem = (f"another notebook of {lab_id} from this student, "
                               f"{chosen.notebook}, was graded: {why}")
        if why:
            chosen.notes.append(f"graded this notebook of {lab_id}, not "
                                f"{', '.join(s.notebook for s, _ in group if s is not chosen)}: {why}")
        if not_attempted(lab, nb):
            chosen.attempted = False
            chosen.rows = [row(chosen, cell_key(c), "not attempted", cell_points(c), 0,
                               "every exercise is still the released stub")
                           for _, c in lab.checks()]


def pick_one(lab: Lab, group: list, root: Path) -> tuple[Submission, object, str]:
    """(submission, notebook, why) of the one notebook to grade among a student's notebooks of
    `lab`: the one with the most exercises worked on, then the most recently saved, then the
    first by name; `why` is "" when there was only one."""
    if len(group) == 1:
        return group[0][0], group[0][1], ""

    def saved(sub):
        try:
            return (root / sub.notebook).stat().st_mtime_ns
        except OSError:
            return 0

    worked = {id(sub): exercises_worked(lab, nb) for sub, nb in group}
    ranked = sorted(group, key=lambda g: (-worked[id(g[0])], -saved(g[0]), g[0].notebook))
    (best, nb), (second, _) = ranked[0], ranked[1]
    if worked[id(best)] != worked[id(second)]:
        why = (f"it has work in {worked[id(best)]} of {len(lab.exercises())} exercises "
               f"({second.notebook}: {worked[id(second)]})")
    elif saved(best) != saved(second):
        why = f"as much work as {second.notebook}, saved more recently"
    else:
        why = f"as much work as {second.notebook}, saved at the same time: first by name"
    return best, nb, why


def _edition_of(nb) -> str:
    """Which edition a notebook is a copy of: the Chinese edition says so in its metadata."""
    language = nb.metadata.get("course", {}).get("language")
    return language if isinstance(language, str) and language else "en"


def collect_reflections(sub: Submission, nb, released_path: Path) -> None:
    """A lesson's answers, kept for the instructor (the released lesson names the questions;
    a cell still holding the placeholder of either edition is not answered)."""
    sub.lesson = released_path.stem
    try:
        released = read_notebook(released_path)
    except LabError as exc:
        released = None
        sub.notes.append(f"the released lesson could not be read ({exc}): its questions are not shown")
    chinese = released_path.parent.parent / CHINESE_EDITION / released_path.parent.name / released_path.name
    other = [read_notebook(chinese)] if chinese.is_file() else []
    rows, notes = reflections.collect(released, nb, other)
    sub.reflections, sub.notes = rows, sub.notes + notes


def row(sub: Submission, check: str, status: str, points, earned, detail: str) -> dict:
    return {"student": sub.student, "notebook": sub.notebook, "lab": sub.lab, "check": check,
            "status": status, "points": whole(points), "earned": whole(earned), "detail": detail}


def progress_line(sub: Submission, n: int, total: int) -> str:
    what = f"[{n}/{total}] {sub.student}"
    if sub.problem:
        return f"{what}: NOT GRADED - {sub.notebook}: {sub.problem}"
    if sub.lesson:
        answered = sum(r["status"] == reflections.ANSWERED for r in sub.reflections)
        return (f"{what}: {answered} of {len(sub.reflections)} questions answered in the lesson "
                f"{sub.lesson} ({sub.notebook}), not graded: collected for you to read")
    if not sub.attempted:
        return f"{what}: {sub.lab} not attempted ({sub.notebook})"
    return f"{what}: {sub.earned} / {sub.points} points in {sub.lab} ({sub.notebook})"
