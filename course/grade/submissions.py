"""The class to grade: one `Submission` per notebook found in the submissions folder
(`collect`), each matched to its released lab, or to a released lesson whose answers are
collected as reflections (`match_all`); and the gradebook row and progress line of one."""
from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from course import reflections
from course.file_trees import remove_tree
from course.grade.student_text import capped, display_name, visible
from course.paths import CHINESE_EDITION
from course.labs import (Lab, LabError, cell_key, cell_kind, cell_points, exercises_worked,
                         match_lab, not_attempted, read_notebook, whole)

# The grader's own output: collecting skips these files, this run's output folder, and the
# folders the grader marks as its own (graded-notebooks/ and feedback/, of any run).
OUTPUT_FILES = ("gradebook.csv", "gradebook.md", "gradebook.json")
MANIFEST = "collect-manifest.json"  # written by `python -m course.collect` beside the notebooks
REPORTS = ("similarity.md", "export-canvas.csv", "export-moodle.csv",  # --similarity, --export
           "capstone-baselines.json")  # the capstone's baselines (course.grade.capstone)
GRADED_MARK = ".course-graded-notebooks"
MAX_NOTEBOOK_BYTES = 64 * 2**20  # the released labs are well under 1 MB


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
    penalty: int | float = 0    # points off for lateness (`course.grade.late`)
    late: dict = field(default_factory=dict)  # when it was handed in, its deadline, and why
    overrides: list[dict] = field(default_factory=list)  # the instructor's (`course.grade.overrides`)
    capstone: dict = field(default_factory=dict)  # the capstone lab's hidden-set run (`course.grade.capstone`)

    @property
    def earned(self):
        """The raw score: its checks' points (overrides included), before any late penalty, or
        the rubric scores of a lesson's reflections (`course.grade.rubric`)."""
        return whole(sum(r["earned"] for r in self.rows) + sum(r.get("score", 0) for r in self.reflections))

    @property
    def final(self):
        return whole(max(0, self.earned - self.penalty))

    @property
    def points(self):
        return whole(sum(r["points"] for r in self.rows if r["points"] != ""))


def fresh_output_folder(folder: Path) -> Path:
    """`folder` emptied and marked as the grader's; refuses a folder of that name it did not make."""
    if folder.exists() or folder.is_symlink():
        if folder.is_symlink() or not (folder / GRADED_MARK).is_file():
            raise SystemExit(f"{folder} exists and was not written by course.grade: move it away, "
                             f"or grade with --output DIR (the grader writes its {folder.name}/ there)")
        remove_tree(folder)
    folder.mkdir(parents=True)
    (folder / GRADED_MARK).write_text("written by python -m course.grade; re-runs skip this folder\n",
                                      encoding="utf-8")
    return folder


def collect(submissions_dir: Path, skip: tuple[Path, ...] = (), skipped: list[str] | None = None
            ) -> list[Submission]:
    """One Submission per notebook found, plus one per entry that cannot be graded, with the
    reason: every student has a row.

    Passed over: hidden entries, the gradebook's own files, the folders in `skip` (this run's
    output) and folders the grader marked as its own. A folder holding a gradebook file and no
    notebook of its own is an earlier run's output: passed over too, and its name appended to
    `skipped` (the gradebook lists it). Links are never followed: a linked notebook or folder is
    not graded, whatever it points to. A file named like a student's folder (`alice.ipynb`
    beside `alice/`) is graded apart, under its own file name, and both say so.
    """
    skip = tuple(p.resolve() for p in skip)
    found: list[tuple[Submission, bool]] = []  # each with: did it come from a student's folder
    for entry in sorted(submissions_dir.iterdir()):
        if entry.name.startswith(".") or entry.name in (*OUTPUT_FILES, *REPORTS, MANIFEST, "__pycache__"):
            continue
        name = display_name(entry.name)
        student = name[:-len(".ipynb")] if name.endswith(".ipynb") and len(name) > 6 else name
        try:
            info = entry.lstat()
        except OSError as exc:
            found.append((Submission(student, name, problem=f"cannot read {name}: {exc.strerror}"), False))
            continue
        if stat.S_ISDIR(info.st_mode):
            if entry.resolve() in skip or (entry / GRADED_MARK).is_file():
                continue
            found += [(sub, True) for sub in _folder(submissions_dir, entry, skipped)]
            continue
        if name.endswith(".ipynb"):
            found.append((Submission(student, name, problem=_refused(entry, name, info, entry.name)), False))
        else:
            found.append((Submission(Path(name).stem, name, problem=_refused(entry, name, info, entry.name) or
                                     f"{name} is not a notebook (.ipynb)"), False))
    _apart(found)
    return [sub for sub, _ in found]


def _refused(path: Path, name: str, info: os.stat_result, raw_name: str) -> str:
    """Why the entry at `path` cannot be graded as a notebook, or "" (`name` is how it is shown,
    `raw_name` the same as the system spells it)."""
    if name != raw_name:
        return (f"{name}: its name is not valid UTF-8 (the bytes that are not are shown as \\xNN): "
                f"rename it and grade again")
    if stat.S_ISLNK(info.st_mode):
        try:
            target = display_name(os.readlink(path))
        except OSError:
            target = "?"
        return (f"{name} is a link (to {target}), not a file: links are not followed, whatever "
                f"they point to; hand in the notebook itself")
    if not stat.S_ISREG(info.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode)
                else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "a folder"
                if stat.S_ISDIR(info.st_mode) else "not a file")
        return f"{name} is not a regular file ({kind}): only notebook files are graded"
    if info.st_size > MAX_NOTEBOOK_BYTES:
        return (f"{name} is {info.st_size / 2**20:.0f} MB, more than a notebook of this course can be "
                f"({MAX_NOTEBOOK_BYTES // 2**20} MB): not graded")
    return ""


def _folder(root: Path, folder: Path, skipped: list[str] | None) -> list[Submission]:
    """The Submissions of one student's folder: its notebooks, at any depth, and its entries
    named like a notebook that cannot be graded (links, FIFOs, ...), each with the reason."""
    student = display_name(folder.name)
    notebooks, refused = [], []
    pending = [folder]
    while pending:  # not recursive: a folder tree may be deeper than Python's recursion limit
        current = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            raw = Path(current).relative_to(root).as_posix() + "/"
            refused.append((raw, f"{display_name(raw)}: cannot read this folder ({exc.strerror})"))
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith(".") or entry.name == "__pycache__":
                continue
            if entry.is_dir(follow_symlinks=False):
                if not os.path.lexists(path / GRADED_MARK):  # graded copies the grader wrote
                    pending.append(path)
                continue
            if not entry.name.endswith(".ipynb"):
                continue
            raw = path.relative_to(root).as_posix()
            why = _refused(path, display_name(raw), entry.stat(follow_symlinks=False), raw)
            (refused if why else notebooks).append((raw, why))
    subs = [Submission(student, raw) for raw, _ in notebooks]
    subs += [Submission(student, display_name(raw), problem=why) for raw, why in refused]
    gradebooks = [n for n in OUTPUT_FILES if os.path.lexists(folder / n)]
    if gradebooks and not subs:  # an earlier run's --output inside the class folder
        if skipped is not None:
            skipped.append(f"{student}/")
        return []
    for sub in subs:
        if gradebooks:
            sub.notes.append(f"this folder also holds {', '.join(gradebooks)}, as the grader's output "
                             f"does: ignored")
    return subs or [Submission(student, student + "/", problem="no .ipynb file in the folder")]


def _apart(found: list[tuple[Submission, bool]]) -> None:
    """A student's folder and a file named like it (`alice/` and `alice.ipynb`) are two entries
    for one name: the file is graded apart, under its own file name, and both say so."""
    by_name: dict[str, list[tuple[Submission, bool]]] = {}
    for sub, in_folder in found:
        by_name.setdefault(sub.student, []).append((sub, in_folder))
    for name, entries in by_name.items():
        files = sorted({s.notebook for s, in_folder in entries if not in_folder})
        if len(files) + any(in_folder for _, in_folder in entries) < 2:
            continue
        folder = f" and the folder {name}/" if any(in_folder for _, in_folder in entries) else ""
        note = (f"{', '.join(files)}{folder} both hand in work for {name}: graded apart, each file "
                f"under its own name; decide which is {name}'s")
        for sub, in_folder in entries:
            if not in_folder:
                sub.student = sub.notebook
            sub.notes.append(note)


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
            refuse_malformed(nb)
            sub.edition = _edition_of(nb)
            name = Path(sub.notebook).name
            if lessons and name in lessons and not nb.metadata.get("course", {}).get("lab"):
                collect_reflections(sub, nb, lessons[name])
                continue
            lab = match_lab(root / sub.notebook, nb, labs, only)
        except LabError as exc:
            sub.problem = str(exc)
            continue
        except Exception as exc:  # one student's notebook never stops the class's grading
            sub.problem = grader_failed(exc)
            continue
        sub.lab = lab.lab_id
        groups.setdefault((sub.student, lab.lab_id), []).append((sub, nb))
    for (_, lab_id), group in groups.items():
        try:
            _pick(labs[lab_id], group, root)
        except Exception as exc:  # as above: that student's notebooks are not graded, with why
            for sub, _ in group:
                sub.problem = sub.problem or grader_failed(exc)


def grader_failed(exc: BaseException) -> str:
    return (f"the grader failed on this notebook ({type(exc).__name__}: {exc}): not graded; "
            f"please report it as a bug of course.grade")


def refuse_malformed(nb) -> None:
    """LabError when a notebook holds what grading cannot take: text that is not valid Unicode
    (a lone surrogate: valid in JSON, but no file can hold it), or course metadata of the
    wrong shape (the grader reads `metadata.course` and each exercise's key)."""
    parts = [("its metadata", nb.metadata)] + [(f"cell {i}", c) for i, c in enumerate(nb.cells)]
    for where, part in parts:
        try:
            json.dumps(part, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = visible(exc.object[exc.start:exc.end])
            raise LabError(f"{where} holds text that is not valid Unicode ({bad}, a lone surrogate): "
                           f"it cannot be graded; save the notebook again from Jupyter") from None
    course = nb.metadata.get("course", {})
    if not isinstance(course, dict):
        raise LabError("its metadata.course is not a mapping: not a notebook of this course as released")
    for key in ("lab", "language"):
        if course.get(key) is not None and not isinstance(course[key], str):
            raise LabError(f"its metadata.course.{key} is not text: not a notebook of this course as released")
    for i, cell in enumerate(nb.cells):
        meta = cell.get("metadata", {}).get("course")
        if meta is not None and not isinstance(meta, dict):
            raise LabError(f"cell {i}'s metadata.course is not a mapping: not a notebook of this course as released")
        if cell_kind(cell) == "exercise" and not isinstance((meta or {}).get("key", ""), str):
            raise LabError(f"cell {i}'s metadata.course.key is not text: not a notebook of this course as released")


def _pick(lab: Lab, group: list, root: Path) -> None:
    """Of a student's notebooks of `lab`, grade one (`pick_one`), the others not, saying why;
    and a notebook whose exercises are all the stubs is not attempted."""
    lab_id = lab.lab_id
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
    return capped(language, 40) if isinstance(language, str) and language else "en"


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
    """The line printed as a notebook is done (what the student controls in it, capped and visible:
    it goes to a terminal)."""
    return visible(capped(_progress(sub, n, total)))


def _progress(sub: Submission, n: int, total: int) -> str:
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
