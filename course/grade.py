"""Grade a folder of student lab notebooks: `python -m course.grade SUBMISSIONS_DIR`.

SUBMISSIONS_DIR holds one entry per student: a folder (the student's name) with their lab
notebooks in it, or a single notebook file (named after the student). Each notebook is matched
to its released lab (`course.labs.match_lab`: the lab id in its metadata, else its file name),
then graded: only its exercise cells are used, every other cell comes from the released lab,
each check runs bare and is judged from outside the kernel, each cell has a timeout, and every
check scores its points or nothing. A lab whose exercises are all untouched stubs is "not
attempted" (scored 0 without running it). A broken submission is reported with its reason and
never stops the others.

The engine is nbval: each notebook becomes a graded copy of its lab's answer key (the release
with `✓ check-key` stored under each check, the student's exercise cells put in), run by pytest
and strict nbval with the course's plugin; each check's result comes from the JUnit XML report.
`--engine kernel` drives one kernel per notebook directly instead, with the same judge.

A student's copy of a lesson (`01_agent_loop.ipynb`, by the released lesson's file name) is
not graded: the text of its `answer` cells, the student's answers to "Things to think about",
goes into the gradebook's Reflections for the instructor to read (`course.reflections`).

Writes gradebook.csv (one row per student, lab and check, and per reflection), gradebook.md (a
total per student, a score per lab, the reason for each failed check, the reflections),
gradebook.json (everything, for `merge`) and graded-notebooks/ (the graded copies, for
`pytest --nbval` by hand) into --output (default: SUBMISSIONS_DIR). Re-runs skip them.

    --jobs N        grade N notebooks at a time (default: the machine's cores); the same
                    gradebook as one at a time
    --shard K/N     grade only the K-th of N parts of the class (by student, stable hashing),
                    so a large class is N jobs on any batch system; then
    python -m course.grade merge DIR... --output DIR
                    combines the shards' gradebooks into one, identical to a single run
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path

import nbformat

from course import reflections
from course.labs import (Lab, LabError, cell_key, cell_points, cell_problem, find_released_labs,
                         graded, load_lab, match_lab, nbval_graded, not_attempted, read_notebook,
                         run, whole)
from course.paths import LABS_DIR, LESSONS_DIR, REPO_ROOT

DEFAULT_LABS = LABS_DIR
DEFAULT_LESSONS = LESSONS_DIR
CSV_FIELDS = ["student", "notebook", "lab", "check", "status", "points", "earned", "detail"]
OUTPUT_FILES = ("gradebook.csv", "gradebook.md", "gradebook.json")
GRADED_MARK = ".course-graded-notebooks"
FORMAT = "course-gradebook/1"


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

    @property
    def earned(self):
        return whole(sum(r["earned"] for r in self.rows))

    @property
    def points(self):
        return whole(sum(r["points"] for r in self.rows if r["points"] != ""))


# ------------------------------------------------------------------------ finding the class
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


def shard_of(student: str, shards: int) -> int:
    """The shard (1..shards) a student belongs to: stable across runs, machines and classes."""
    return int(hashlib.sha256(student.encode("utf-8")).hexdigest(), 16) % shards + 1


def parse_shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard takes K/N, e.g. 1/4; got {text!r}") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"--shard K/N needs 1 <= K <= N; got {text!r}")
    return k, n


def match_all(subs: list[Submission], root: Path, labs: dict[str, Lab], only: str | None,
              lessons: dict[str, Path] | None = None) -> None:
    """Find each notebook's lab (or the reason it has none); a student's second notebook of the
    same lab is not graded (the first, in name order, is). A copy of a lesson (named like a
    released one in `lessons`, with no lab id in its metadata) is not graded: its answer cells
    are collected as reflections."""
    seen: dict[tuple[str, str], str] = {}
    for sub in subs:
        if sub.problem:
            continue
        try:
            nb = read_notebook(root / sub.notebook)
            name = Path(sub.notebook).name
            if lessons and name in lessons and not nb.metadata.get("course", {}).get("lab"):
                collect_reflections(sub, nb, lessons[name])
                continue
            lab = match_lab(root / sub.notebook, nb, labs, only)
        except LabError as exc:
            sub.problem = str(exc)
            continue
        sub.lab = lab.lab_id
        first = seen.setdefault((sub.student, lab.lab_id), sub.notebook)
        if first != sub.notebook:
            sub.problem = f"a second notebook of {lab.lab_id} from this student; {first} was graded"
        elif not_attempted(lab, nb):
            sub.attempted = False
            sub.rows = [row(sub, cell_key(c), "not attempted", cell_points(c), 0,
                            "every exercise is still the released stub")
                        for _, c in lab.checks()]


def collect_reflections(sub: Submission, nb, released_path: Path) -> None:
    """A lesson's answers, kept for the instructor (the released lesson names the questions)."""
    sub.lesson = released_path.stem
    try:
        released = read_notebook(released_path)
    except LabError as exc:
        released = None
        sub.notes.append(f"the released lesson could not be read ({exc}): its questions are not shown")
    rows, notes = reflections.collect(released, nb)
    sub.reflections, sub.notes = rows, sub.notes + notes


def reflection_rows(sub: Submission) -> list[dict]:
    """gradebook.csv's rows for a lesson's answers: no points, the answer as the detail."""
    return [{"student": sub.student, "notebook": sub.notebook, "lab": sub.lesson, "check": r["key"],
             "status": r["status"], "points": "", "earned": "", "detail": r["answer"]}
            for r in sub.reflections]


def row(sub: Submission, check: str, status: str, points, earned, detail: str) -> dict:
    return {"student": sub.student, "notebook": sub.notebook, "lab": sub.lab, "check": check,
            "status": status, "points": whole(points), "earned": whole(earned), "detail": detail}


# ------------------------------------------------------------------------ grading one notebook
def grade_notebook(sub: Submission, root: str, lab_path: str, timeout: float) -> Submission:
    """Grade one matched notebook in a fresh kernel (run in a worker process with --jobs)."""
    try:
        lab = load_lab(lab_path)
        notebook, sub.notes = graded(lab, read_notebook(Path(root) / sub.notebook))
        with tempfile.TemporaryDirectory(prefix="course-grade-") as cwd:  # nothing shared between runs
            outcome = run(lab, notebook, timeout=timeout, cwd=Path(cwd))
    except Exception as exc:  # e.g. the kernel could not start: report, keep grading others
        sub.problem = f"could not run the notebook: {type(exc).__name__}: {exc}"
        return sub
    sub.notes += outcome.cell_problems()
    status_names = {"passed": "pass", "failed": "fail"}
    sub.rows = [row(sub, r.key, status_names.get(r.status, r.status), r.points, r.earned, r.error)
                for r in outcome.checks()]
    return sub


def _progress_line(sub: Submission, n: int, total: int) -> str:
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


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def worker_context():
    """Worker processes forked from a server that has imported the grader once (importing
    nbformat costs seconds); plain spawn where there is no forkserver (Windows)."""
    import multiprocessing

    if "forkserver" in multiprocessing.get_all_start_methods():
        context = get_context("forkserver")
        context.set_forkserver_preload(["course.labs", "nbclient"])
        return context
    return get_context("spawn")


def grade_all(subs: list[Submission], root: Path, labs: dict[str, Lab], timeout: float, jobs: int,
              report=print) -> None:
    """Grade every matched, attempted notebook, `jobs` at a time; `subs` keeps its order."""
    todo = [i for i, s in enumerate(subs) if s.lab and not s.problem and s.attempted]
    done = 0

    def progress(sub: Submission):
        nonlocal done
        done += 1
        report(_progress_line(sub, done, len(subs)))

    for i, sub in enumerate(subs):
        if i not in todo:
            progress(sub)
    args = [(subs[i], str(root), str(labs[subs[i].lab].path), timeout) for i in todo]
    if jobs <= 1 or len(todo) <= 1:
        for i, a in zip(todo, args):
            subs[i] = grade_notebook(*a)
            progress(subs[i])
        return
    with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=worker_context()) as pool:
        futures = {pool.submit(grade_notebook, *a): i for i, a in zip(todo, args)}
        for future in as_completed(futures):
            i = futures[future]
            try:
                subs[i] = future.result()
            except Exception as exc:  # the worker process itself died
                subs[i].problem = f"the grading process failed: {type(exc).__name__}: {exc}"
            progress(subs[i])


# ------------------------------------------------------------------------ the nbval engine
GRADED_DIR = "graded-notebooks"


def prepare_graded_dir(out: Path) -> Path:
    """`out/graded-notebooks/`, emptied; refuses a folder of that name the grader did not make."""
    folder = out / GRADED_DIR
    if folder.exists():
        if not (folder / GRADED_MARK).exists():
            raise SystemExit(f"{folder} exists and was not written by course.grade: move it away "
                             f"(the graded copies go there)")
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / GRADED_MARK).write_text("graded copies written by python -m course.grade; "
                                      "re-runs skip this folder\n", encoding="utf-8")
    return folder


def nbval_command(notebooks: list[Path], junit: Path, timeout: float, inifile: Path) -> list[str]:
    """pytest + strict nbval over graded copies, with the course's plugin and sanitizers (run
    it with `nbval_environment()`: only the plugins named here are loaded)."""
    command = [sys.executable, "-m", "pytest", "-c", str(inifile), "--rootdir", str(inifile.parent),
               "-p", "nbval.plugin", "-p", "course.pytest_plugin", "-p", "no:cacheprovider",
               "-q", "--no-header", "--nbval", "--nbval-current-env", f"--nbval-cell-timeout={timeout:g}",
               f"--junitxml={junit}", "-o", "junit_logging=no"]
    sanitizers = REPO_ROOT / "tests" / "nbval_sanitize.cfg"
    if sanitizers.exists():
        command += ["--nbval-sanitize-with", str(sanitizers)]
    return command + [str(p) for p in notebooks]


def nbval_environment() -> dict[str, str]:
    return {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # start-up in a second, not five
            "COURSE_NBVAL_IPC_KERNELS": "1"}  # kernels on local sockets (course.pytest_plugin)


def run_nbval(notebooks: list[Path], timeout: float, work: Path, name: str) -> tuple[list[dict], str]:
    """Run pytest + nbval over graded copies in `work`; the course_* properties of each cell."""
    inifile = work / "pytest.ini"
    if not inifile.exists():
        inifile.write_text("[pytest]\n", encoding="utf-8")
    junit = work / f"junit-{name}.xml"
    done = subprocess.run(nbval_command(notebooks, junit, timeout, inifile), cwd=work, env=nbval_environment(),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return (read_junit(junit) if junit.exists() else []), done.stdout


def read_junit(path: Path) -> list[dict[str, str]]:
    """The course_* properties of every test case in a JUnit XML report."""
    import xml.etree.ElementTree as ET

    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value", "") for p in case.iter("property")}
        if "course_student" in props:
            cases.append(props)
    return cases


def grade_all_nbval(subs: list[Submission], root: Path, labs: dict[str, Lab], timeout: float,
                    jobs: int, out: Path, report=print) -> None:
    """Grade every matched, attempted notebook through pytest + nbval: the graded copies, in
    chunks, `jobs` pytest processes at a time; the copies are kept in OUT/graded-notebooks."""
    from concurrent.futures import ThreadPoolExecutor

    todo = [s for s in subs if s.lab and not s.problem and s.attempted]
    done = 0
    for sub in subs:
        if sub not in todo:
            done += 1
            report(_progress_line(sub, done, len(subs)))
    if not todo:
        return
    keep = prepare_graded_dir(out)
    with tempfile.TemporaryDirectory(prefix="course-nbval-") as work:
        work = Path(work)
        paths = {}
        for sub in todo:
            nb, sub.notes = nbval_graded(labs[sub.lab], read_notebook(root / sub.notebook),
                                         sub.student, sub.notebook)
            path = work / "graded" / sub.student / f"{sub.lab}.ipynb"  # a folder (the kernel's cwd) each
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, path)
            (keep / sub.student).mkdir(exist_ok=True)
            shutil.copyfile(path, keep / sub.student / path.name)
            paths[id(sub)] = path
        size = max(1, min(8, -(-len(todo) // jobs)))  # chunks: progress as they finish, balanced load
        chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
        with ThreadPoolExecutor(max_workers=min(jobs, len(chunks))) as pool:
            futures = [pool.submit(run_nbval, [paths[id(s)] for s in chunk], timeout, work, str(k))
                       for k, chunk in enumerate(chunks)]
            for chunk, future in zip(chunks, futures):
                cases, output = future.result()
                for sub in chunk:
                    record_nbval(sub, cases, output, labs[sub.lab])
                    done += 1
                    report(_progress_line(sub, done, len(subs)))


def record_nbval(sub: Submission, cases: list[dict], output: str, lab: Lab) -> None:
    """Rows and notes of one submission from the course_* properties nbval's run reported."""
    mine = [c for c in cases if (c["course_student"], c["course_notebook"]) == (sub.student, sub.notebook)]
    if not mine:
        tail = " ".join(output.strip().splitlines()[-3:])
        sub.problem = f"nbval did not report on this notebook: {tail}"
        return
    points = {cell_key(c): cell_points(c) for _, c in lab.checks()}
    for case in mine:
        kind, key, status = case["course_kind"], case["course_key"], case["course_status"]
        if kind == "check":
            sub.rows.append(row(sub, key, status, points[key], points[key] if status == "pass" else 0,
                                case["course_detail"]))
        elif kind != "tally" and status != "pass":
            sub.notes.append(cell_problem(kind, key or None, int(case["course_index"]), status,
                                          case["course_detail"]))


# ------------------------------------------------------------------------ the gradebook
def lab_info(labs: dict[str, Lab], subs: list[Submission]) -> dict[str, dict]:
    """Points, checks and a digest of every lab some submission was matched to."""
    info = {}
    for lab_id in sorted({s.lab for s in subs if s.lab}):
        lab = labs[lab_id]
        info[lab_id] = {"points": lab.points(),
                        "checks": [c.metadata["course"]["key"] for _, c in lab.checks()],
                        "sha256": hashlib.sha256(lab.path.read_bytes()).hexdigest()}
    return info


def write_gradebook(subs: list[Submission], labs: dict[str, dict], out: Path,
                    shard: str | None = None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    subs = sorted(subs, key=lambda s: (s.student, s.notebook))
    paths = [out / name for name in OUTPUT_FILES]
    with paths[0].open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for sub in subs:
            if sub.problem:
                writer.writerow({"student": sub.student, "notebook": sub.notebook, "lab": sub.lab,
                                 "check": "", "status": "not graded", "points": "", "earned": 0,
                                 "detail": sub.problem})
            writer.writerows(sub.rows)
            writer.writerows(reflection_rows(sub))
    paths[1].write_text(markdown(subs, labs), encoding="utf-8")
    data = {"format": FORMAT, "shard": shard, "labs": labs, "submissions": [asdict(s) for s in subs]}
    paths[2].write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return paths


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown(subs: list[Submission], labs: dict[str, dict]) -> str:
    """gradebook.md: a table (a score per lab and a total per student), then what went wrong."""
    lab_ids = sorted(labs)
    possible = whole(sum(labs[i]["points"] for i in lab_ids))
    students = sorted({s.student for s in subs})
    mine = {name: [s for s in subs if s.student == name] for name in students}
    graded_count = sum(1 for s in subs if s.lab and not s.problem)
    broken = sum(1 for s in subs if s.problem)
    lessons = [s for s in subs if s.lesson and not s.problem]
    read = (f" {len(lessons)} lesson notebooks hold reflections, not graded: see Reflections at the "
            f"end." if lessons else "")
    lines = ["# Gradebook", "",
             f"{len(students)} students, {graded_count} lab notebooks graded, {broken} not graded. "
             f"The total counts every lab in this gradebook ({possible} points); a lab a student "
             f"did not hand in counts 0.{read}", "",
             "| student | " + " | ".join(lab_ids) + " | total |",
             "|---|" + "---|" * len(lab_ids) + "---|"]
    for name in students:
        cells = []
        for lab_id in lab_ids:
            theirs = [s for s in mine[name] if s.lab == lab_id]
            done = next((s for s in theirs if not s.problem), None)
            if done is None:
                cells.append("not graded" if theirs else "—")
            elif not done.attempted:
                cells.append("not attempted")
            else:
                cells.append(f"{done.earned} / {done.points}")
        earned = whole(sum(s.earned for s in mine[name] if not s.problem))
        lines.append(f"| {_cell(name)} | " + " | ".join(cells) + f" | {earned} / {possible} |")
    details = []
    for name in students:
        items = []
        for s in mine[name]:
            where = f"`{s.notebook}`"
            if s.problem:
                items.append(f"- {where}: not graded: {s.problem}")
                continue
            if s.lesson:
                continue  # in Reflections
            if not s.attempted:
                items.append(f"- {s.lab} ({where}): not attempted (every exercise is still the stub)")
                continue
            failed = [r for r in s.rows if r["status"] != "pass"]
            if not failed and not s.notes:
                continue
            items.append(f"- {s.lab} ({where}): {s.earned} / {s.points}")
            items += [f"  - note: {_cell(n)}" for n in s.notes]
            items += [f"  - ✗ {r['check']} ({r['status']}): {' — '.join(r['detail'].splitlines()) or 'failed'}"
                      for r in failed]
        if items:
            details += ["", f"### {name}", ""] + items
    if details:
        lines += ["", "## What failed, and why"] + details
    lines += reflections_markdown(students, mine)
    return "\n".join(lines).rstrip("\n") + "\n"


def reflections_markdown(students: list[str], mine: dict[str, list[Submission]]) -> list[str]:
    """gradebook.md's Reflections: per student and lesson, each question and the answer."""
    out = []
    for name in students:
        items = []
        for s in (s for s in mine[name] if s.lesson and not s.problem):
            answered = sum(r["status"] == reflections.ANSWERED for r in s.reflections)
            items += ["", f"**{s.lesson}** (`{s.notebook}`): {answered} of {len(s.reflections)} answered", ""]
            items += [f"- note: {_cell(n)}" for n in s.notes]
            for r in s.reflections:
                number = r["key"].removeprefix("think-")
                items.append(f"{number}. {r['question'] or r['key']}")
                if r["status"] == reflections.ANSWERED:
                    items += ["", *("   > " + line if line.strip() else "   >"
                                    for line in r["answer"].splitlines()), ""]
                else:
                    items += ["", "   *not answered*", ""]
        if items:
            out += ["", f"### {name}"] + items
    return ["", "## Reflections", "",
            "Answers to the lessons' \"Things to think about\", for you to read; they score no "
            "points. The instructor's answer key is docs/instructors/answer_key.md."] + out if out else []


# ------------------------------------------------------------------------ merging shards
def merge(folders: list[Path], out: Path) -> list[Path]:
    """Combine shard gradebooks (their gradebook.json) into one gradebook in `out`."""
    subs, labs, shards, owner = [], {}, {}, {}
    for folder in folders:
        path = folder / "gradebook.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SystemExit(f"merge: cannot read {path}: {exc}") from None
        if data.get("format") != FORMAT:
            raise SystemExit(f"merge: {path} is not a gradebook written by this version of course.grade")
        shard = data.get("shard") or "1/1"
        if shard in shards:
            raise SystemExit(f"merge: shard {shard} appears twice: {shards[shard]} and {folder}")
        shards[shard] = folder
        for lab_id, info in data["labs"].items():
            if labs.setdefault(lab_id, info)["sha256"] != info["sha256"]:
                raise SystemExit(f"merge: the shards graded different releases of {lab_id}")
        for item in data["submissions"]:
            sub = Submission(**item)
            if owner.setdefault(sub.student, shard) != shard:
                raise SystemExit(f"merge: student {sub.student!r} is in shard {owner[sub.student]} "
                                 f"and in shard {shard}")
            subs.append(sub)
    totals = {s.split("/")[1] for s in shards}
    if len(totals) != 1:
        raise SystemExit(f"merge: the shards were cut differently: {', '.join(sorted(shards))}")
    n = int(totals.pop())
    missing = [f"{k}/{n}" for k in range(1, n + 1) if f"{k}/{n}" not in shards]
    if missing:
        raise SystemExit(f"merge: shard(s) {', '.join(missing)} missing")
    return write_gradebook(subs, dict(sorted(labs.items())), out)


# ------------------------------------------------------------------------ command line
def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["merge"]:
        return main_merge(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m course.grade", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path, help="folder of student submissions")
    parser.add_argument("--labs", type=Path, default=DEFAULT_LABS, help="folder of released labs")
    parser.add_argument("--lessons", type=Path, default=DEFAULT_LESSONS,
                        help="folder of released lessons (a student's copy of one is collected as "
                             "reflections, not graded)")
    parser.add_argument("--lab", help="grade only this lab id (others are reported as wrong lab)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per cell (default 60)")
    parser.add_argument("--jobs", type=int, default=default_jobs(),
                        help="notebooks graded at a time (default: the number of cores)")
    parser.add_argument("--shard", type=parse_shard, metavar="K/N",
                        help="grade only the K-th of N parts of the class (needs --output)")
    parser.add_argument("--output", "--out", dest="output", type=Path,
                        help="where to write the gradebook (default: the submissions folder)")
    parser.add_argument("--engine", choices=("nbval", "kernel"), default="nbval",
                        help="nbval (default): each graded copy runs under pytest + strict nbval "
                             "against the lab's answer key, and is kept in OUTPUT/graded-notebooks; "
                             "kernel: the same judging, one kernel driven directly (faster)")
    args = parser.parse_args(argv)

    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder")
    if args.shard and not args.output:
        parser.error("--shard needs --output DIR (one folder per shard, for `merge`)")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    try:
        labs = find_released_labs(args.labs)
    except LabError as exc:
        parser.error(f"a released lab is broken: {exc}")
    if not labs:
        parser.error(f"no released labs (*_lab.ipynb) in {args.labs}")
    if args.lab and args.lab not in labs:
        parser.error(f"unknown lab {args.lab!r}; released: {', '.join(sorted(labs))}")
    out = args.output or args.submissions
    subs = collect(args.submissions, skip=(out,))
    shard = None
    if args.shard:
        k, n = args.shard
        shard = f"{k}/{n}"
        subs = [s for s in subs if shard_of(s.student, n) == k]
        print(f"Shard {shard}: {len({s.student for s in subs})} students.")
    if not subs:
        print(f"No submissions in {args.submissions}.")
    match_all(subs, args.submissions, labs, args.lab, reflections.find_released_lessons(args.lessons))
    if args.engine == "nbval":
        grade_all_nbval(subs, args.submissions, labs, args.timeout, args.jobs, out)
    else:
        grade_all(subs, args.submissions, labs, args.timeout, args.jobs)
    paths = write_gradebook(subs, lab_info(labs, subs), out, shard)
    print(f"\nWrote {', '.join(str(p) for p in paths)}")
    return 0


def main_merge(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.grade merge",
                                     description="Combine shard gradebooks (from --shard K/N "
                                                 "--output DIR) into one.")
    parser.add_argument("folders", type=Path, nargs="+", help="the shards' --output folders")
    parser.add_argument("--output", "--out", dest="output", type=Path, default=Path("."),
                        help="where to write the merged gradebook (default: here)")
    args = parser.parse_args(argv)
    paths = merge(args.folders, args.output)
    print(f"Merged {len(args.folders)} shards. Wrote {', '.join(str(p) for p in paths)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
