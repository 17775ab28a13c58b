"""The nbval engine (the default): each notebook becomes a graded copy of its lab's answer key,
kept in OUTPUT/graded-notebooks, run by pytest and strict nbval with the course's plugin; each
check's result is read from the JUnit XML report."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


from course.grade.submissions import GRADED_MARK, Submission, progress_line, row
from course.labs import Lab, cell_key, cell_points, cell_problem, nbval_graded, read_notebook
from course.labs.answer_keys import SCRATCH_SUFFIX, program_path, write_graded
from course.paths import REPO_ROOT

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
               "-p", "course.fast_imports", "-p", "nbval.plugin", "-p", "course.pytest_plugin",
               "-p", "no:cacheprovider",
               "-q", "--no-header", "--nbval", "--nbval-current-env", f"--nbval-cell-timeout={timeout:g}",
               f"--junitxml={junit}", "-o", "junit_logging=no"]
    sanitizers = REPO_ROOT / "tests" / "nbval_sanitize.cfg"
    if sanitizers.exists():
        command += ["--nbval-sanitize-with", str(sanitizers)]
    return command + [str(p) for p in notebooks]


def nbval_environment() -> dict[str, str]:
    return {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # start-up in a second, not five
            "COURSE_NBVAL_IPC_KERNELS": "1",  # kernels on local sockets (course.pytest_plugin)
            # the judge's messages in English, and an instructor's own COURSE_LANGUAGE (even a
            # bad one) cannot reach the grading kernels
            "COURSE_LANGUAGE": "en"}


def run_nbval(notebooks: list[Path], timeout: float, work: Path, name: str) -> tuple[list[dict], str]:
    """Run pytest + nbval over graded copies in `work`; the course_* properties of each cell."""
    inifile = work / "pytest.ini"
    if not inifile.exists():
        inifile.write_text("[pytest]\n", encoding="utf-8")
    junit = work / f"junit-{name}.xml"
    done = subprocess.run(nbval_command(notebooks, junit, timeout, inifile), cwd=work, env=nbval_environment(),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return (read_junit(junit) if junit.exists() else []), done.stdout


def grade_copy(lab: Lab, nb, program, timeout: float) -> tuple[dict[str, tuple[str, str]], str]:
    """One graded copy (`nbval_graded`, `nbval_notebook`) run in a fresh folder: check key ->
    (status, detail) for every check of the lab ("not graded" for one nbval did not report),
    and pytest's output."""
    with tempfile.TemporaryDirectory(prefix="course-grade-") as work:
        work = Path(work)
        copy = write_graded(work / lab.lab_id / lab.path.name, nb, program, timeout=timeout)
        cases, output = run_nbval([copy], timeout, work, "one")
    found = {c["course_key"]: (c["course_status"], c["course_detail"])
             for c in cases if c["course_kind"] == "check"}
    tail = " ".join(output.strip().splitlines()[-3:])
    return {key: found.get(key, ("not graded", f"nbval did not report on this check: {tail}"))
            for key in (cell_key(c) for _, c in lab.checks())}, output


def read_junit(path: Path) -> list[dict[str, str]]:
    """The course_* properties of every test case in a JUnit XML report."""
    import xml.etree.ElementTree as ET

    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value", "") for p in case.iter("property")}
        props["seconds"] = case.get("time", "0")
        if "course_student" in props:
            cases.append(props)
    return cases


def grade_all_nbval(subs: list[Submission], root: Path, labs: dict[str, Lab], timeout: float,
                    jobs: int, out: Path, report=print, confined: bool = True) -> None:
    """Grade every matched, attempted notebook through pytest + nbval: the graded copies, in
    chunks, `jobs` pytest processes at a time; the copies are kept in OUT/graded-notebooks."""
    from concurrent.futures import ThreadPoolExecutor

    todo = [s for s in subs if s.lab and not s.problem and s.attempted]
    done = 0
    for sub in subs:
        if sub not in todo:
            done += 1
            report(progress_line(sub, done, len(subs)))
    if not todo:
        return
    keep = prepare_graded_dir(out)
    with tempfile.TemporaryDirectory(prefix="course-nbval-") as work:
        work = Path(work)
        paths = {}
        for sub in todo:
            nb, program, notes = nbval_graded(labs[sub.lab], read_notebook(root / sub.notebook),
                                              sub.student, sub.notebook)
            sub.notes += notes
            # a folder per student (the judge kernels' cwd); a worker's scratch per notebook
            path = work / "graded" / sub.student / f"{sub.lab}.ipynb"
            write_graded(path, nb, program, timeout=timeout, confined=confined)
            if program is not None and not confined:
                sub.notes.append("graded --unconfined: the submission's code ran with the grader's "
                                 "rights, outside the sandbox")
            (keep / sub.student).mkdir(exist_ok=True)
            shutil.copyfile(path, keep / sub.student / path.name)
            if program is not None:  # `pytest --nbval` by hand needs the worker's program too
                shutil.copyfile(program_path(path), keep / sub.student / program_path(path).name)
                (keep / sub.student / (path.stem + SCRATCH_SUFFIX)).mkdir(exist_ok=True)
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
                    report(progress_line(sub, done, len(subs)) + _seconds(sub, cases))


def _seconds(sub: Submission, cases: list[dict]) -> str:
    """How long nbval spent on the notebook's cells (the progress line's; the gradebook stays
    the same from run to run)."""
    spent = 0.0
    for case in cases:
        if (case["course_student"], case["course_notebook"]) == (sub.student, sub.notebook):
            try:
                spent += float(case["seconds"])
            except ValueError:
                pass
    return f", {spent:.1f} s" if spent else ""


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
