"""The kernel engine (`--engine kernel`): each graded notebook runs in one kernel driven
directly (`course.labs.run`), in worker processes `--jobs` at a time, judged as nbval's are."""
from __future__ import annotations

import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

from course.grade.submissions import Submission, _progress_line, row
from course.labs import Lab, graded, load_lab, read_notebook, run

def grade_notebook(sub: Submission, root: str, lab_path: str, timeout: float) -> Submission:
    """Grade one matched notebook in a fresh kernel (run in a worker process with --jobs)."""
    try:
        lab = load_lab(lab_path)
        notebook, notes = graded(lab, read_notebook(Path(root) / sub.notebook))
        sub.notes += notes
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
