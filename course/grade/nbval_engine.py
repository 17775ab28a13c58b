"""The nbval engine (the default): each notebook becomes a graded copy of its lab's answer key,
kept in OUTPUT/graded-notebooks, run by pytest and strict nbval with the course's plugin; each
check's result is read from the JUnit XML report."""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


from course.file_trees import remove_tree
from course.grade.feedback import show_verdicts
from course.grade.submissions import GRADED_MARK, Submission, fresh_output_folder, grader_failed, progress_line, row
from course.labs import Lab, cell_key, cell_points, cell_problem, nbval_graded, read_notebook
from course.labs.answer_keys import SCRATCH_SUFFIX, program_path, write_graded
from course.paths import REPO_ROOT

GRADED_DIR = "graded-notebooks"


def default_notebook_timeout(timeout: float) -> float:
    """Seconds for all the cells of one notebook together: 300, or 5 cells' worth if more (a
    class waits on its slowest notebook; an honest one takes seconds)."""
    return max(300.0, 5 * timeout)


def nbval_command(notebooks: list[Path], junit: Path, timeout: float, inifile: Path,
                  notebook_timeout: float | None = None) -> list[str]:
    """pytest + strict nbval over graded copies, with the course's plugin and sanitizers (run
    it with `nbval_environment()`: only the plugins named here are loaded)."""
    notebook_timeout = notebook_timeout or default_notebook_timeout(timeout)
    command = [sys.executable, "-m", "pytest", "-c", str(inifile), "--rootdir", str(inifile.parent),
               "-p", "course.fast_imports", "-p", "nbval.plugin", "-p", "course.pytest_plugin",
               "-p", "no:cacheprovider",
               "-q", "--no-header", "--nbval", "--nbval-current-env", f"--nbval-cell-timeout={timeout:g}",
               f"--lab-notebook-timeout={notebook_timeout:g}",
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


def run_nbval(notebooks: list[Path], timeout: float, work: Path, name: str,
              notebook_timeout: float | None = None) -> tuple[list[dict], str]:
    """Run pytest + nbval over graded copies in `work`; the course_* properties of each cell."""
    inifile = work / "pytest.ini"
    if not inifile.exists():
        inifile.write_text("[pytest]\n", encoding="utf-8")
    junit = work / f"junit-{name}.xml"
    done = subprocess.run(nbval_command(notebooks, junit, timeout, inifile, notebook_timeout), cwd=work,
                          env=nbval_environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace")
    return (read_junit(junit) if junit.exists() else []), done.stdout


def grade_copy(lab: Lab, nb, program, timeout: float,
               notebook_timeout: float | None = None) -> tuple[dict[str, tuple[str, str]], str]:
    """One graded copy (`nbval_graded`, `nbval_notebook`) run in a fresh folder: check key ->
    (status, detail) for every check of the lab ("not graded" for one nbval did not report),
    and pytest's output."""
    with scratch_folder("course-grade-") as work:
        copy = write_graded(work / lab.lab_id / lab.path.name, nb, program, timeout=timeout)
        cases, output = run_nbval([copy], timeout, work, "one", notebook_timeout)
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


@contextlib.contextmanager
def scratch_folder(prefix: str):
    """A temporary folder, removed afterwards however deep the tree a student's code left in it
    (`course.file_trees.remove_tree`); what cannot be removed is reported, never raised."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    finally:
        try:
            remove_tree(work)
        except OSError as exc:
            print(f"course.grade: could not remove the temporary folder {work}: {exc}", file=sys.stderr)


def grade_all_nbval(subs: list[Submission], root: Path, labs: dict[str, Lab], timeout: float,
                    jobs: int, out: Path, report=print, confined: bool = True,
                    notebook_timeout: float | None = None, adjust=None, partial: bool = False) -> None:
    """Grade every matched, attempted notebook through pytest + nbval: the graded copies, in
    chunks, `jobs` pytest processes at a time; the copies are kept in OUT/graded-notebooks,
    showing the verdicts (`course.grade.feedback.show_verdicts`) once `adjust(sub)` (the
    instructor's overrides and late policy) has run. `partial` (a regrade of some rows) keeps
    the other students' graded copies there."""
    from concurrent.futures import ThreadPoolExecutor

    todo = [s for s in subs if s.lab and not s.problem and s.attempted]
    done = 0
    if todo:
        keep = out / GRADED_DIR
        if not (partial and (keep / GRADED_MARK).is_file()):
            fresh_output_folder(keep)
    with scratch_folder("course-nbval-") as work:
        paths, shown = {}, {}
        for sub in todo:
            try:
                paths[id(sub)], shown[id(sub)] = _write_copy(sub, root, labs[sub.lab], work, keep, timeout,
                                                             confined)
            except Exception as exc:  # one student's notebook never stops the class's grading
                sub.problem = grader_failed(exc)
        for sub in subs:
            if id(sub) not in paths:
                done += 1
                report(progress_line(sub, done, len(subs)))
        todo = [s for s in todo if id(s) in paths]
        if not todo:
            return
        size = max(1, min(8, -(-len(todo) // jobs)))  # chunks: progress as they finish, balanced load
        chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
        with ThreadPoolExecutor(max_workers=min(jobs, len(chunks))) as pool:
            futures = [pool.submit(run_nbval, [paths[id(s)] for s in chunk], timeout, work, str(k),
                                   notebook_timeout)
                       for k, chunk in enumerate(chunks)]
            for chunk, future in zip(chunks, futures):
                cases, output = future.result()
                for sub in chunk:
                    try:
                        record_nbval(sub, cases, output, labs[sub.lab])
                        if adjust is not None:
                            adjust(sub)
                        show_verdicts(keep / sub.student / paths[id(sub)].name, sub, shown[id(sub)])
                    except Exception as exc:  # as above
                        sub.problem = grader_failed(exc)
                    done += 1
                    report(progress_line(sub, done, len(subs)) + _seconds(sub, cases))


def _write_copy(sub: Submission, root: Path, lab: Lab, work: Path, keep: Path, timeout: float,
                confined: bool) -> tuple[Path, dict[str, str] | None]:
    """Write a submission's graded copy into `work` and keep a copy of it in `keep`; its path,
    and the exercises its worker runs (None when the lab has no worker)."""
    nb, program, notes = nbval_graded(lab, read_notebook(root / sub.notebook), sub.student, sub.notebook)
    sub.notes += notes
    # a folder per student (the judge kernels' cwd); a worker's scratch per notebook
    path = work / "graded" / sub.student / f"{sub.lab}.ipynb"
    write_graded(path, nb, program, timeout=timeout, confined=confined)
    if program is not None and not confined:
        sub.notes.append("graded --unconfined: the submission's code ran with the grader's "
                         "rights, outside the sandbox")
    (keep / sub.student).mkdir(exist_ok=True)
    shutil.copyfile(path, keep / sub.student / path.name)
    if program is None:
        return path, None
    # `pytest --nbval` by hand needs the worker's program too
    shutil.copyfile(program_path(path), keep / sub.student / program_path(path).name)
    (keep / sub.student / (path.stem + SCRATCH_SUFFIX)).mkdir(exist_ok=True)
    return path, {c["key"]: c["source"] for c in program.cells if c["kind"] == "exercise"}


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
