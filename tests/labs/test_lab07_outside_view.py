"""Lab 07 graded in the worker: what a weak run_with_hygiene does is seen from outside.

When grading, the student's functions run in a worker process and the attack harness runs
beside the checks, so the commands a tool starts are the worker's descendants and the output it
holds sits in the worker's memory. Two classic mistakes, each graded through nbval with every
other exercise the reference answer:

- killing only the command, not its process group: `ls .; sleep 30 &` leaves `sleep` running,
  and check-hygiene-attack-table names the survivor;
- reading all the output and cutting it afterwards: 24 MB of awk output is held in the worker,
  and the check names the memory breach.

Both are judged from /proc (course.labs.observe), not from anything the worker reports.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from course.grade import run_nbval
from course.labs import cell_key, load_lab
from course.labs.answer_keys import nbval_notebook, write_graded
from course.paths import LABS_DIR

LAB = next(LABS_DIR.glob("07_*_lab.ipynb"))

KILLS_ONLY_THE_COMMAND = '''\
import os as _os

from solutions.sandbox import hygiene as _hygiene


def _kill_the_command(pgid):  # the command's own pid only, not its group
    try:
        _os.kill(pgid, 9)
    except ProcessLookupError:
        pass


_hygiene._kill_group = _kill_the_command
from solutions.sandbox.hygiene import run_with_hygiene
'''

READS_EVERYTHING = '''\
from solutions.sandbox.hygiene import run_with_hygiene as _reading_capped
from course.givens.sandbox.limits import RunResult as _RunResult


def run_with_hygiene(argv, cwd, *, timeout, max_output_bytes, home=None, limits=DEFAULT_LIMITS):
    everything = _reading_capped(argv, cwd, timeout=timeout, max_output_bytes=10**9, home=home,
                                 limits=limits)  # all of it in memory, cut afterwards
    cut = len(everything.output) > max_output_bytes
    return _RunResult(everything.output[:max_output_bytes], None if cut else everything.exit_code,
                      timed_out=everything.timed_out, truncated=cut)
'''

VARIANTS = {"kills-only-the-command": KILLS_ONLY_THE_COMMAND, "reads-everything": READS_EVERYTHING}


@pytest.fixture(scope="module")
def verdicts():
    """check key -> (status, detail) for each variant, graded through pytest + nbval."""
    lab = load_lab(LAB)
    reference = {cell_key(c): f"from {lab.solution_module} import {cell_key(c)}" for _, c in lab.exercises()}
    with tempfile.TemporaryDirectory(prefix="course-lab07-outside-") as work:
        work = Path(work)
        copies = []
        for name, source in VARIANTS.items():
            nb, program = nbval_notebook(lab, {**reference, "run_with_hygiene": source},
                                         {"student": name, "notebook": LAB.name}, solutions_visible=True)
            copies.append(write_graded(work / name / lab.lab_id / LAB.name, nb, program, timeout=300))
        cases, output = run_nbval(copies, 600, work, "outside")
    found = {}
    for case in cases:
        if case["course_kind"] == "check":
            found.setdefault(case["course_student"], {})[case["course_key"]] = (
                case["course_status"], case["course_detail"])
    assert set(found) == set(VARIANTS), output[-3000:]
    return found


def test_a_background_process_left_by_the_worker_is_a_survivor(verdicts):
    status, detail = verdicts["kills-only-the-command"]["check-hygiene-attack-table"]
    assert status == "fail"
    assert "survivor_background" in detail and "survivor" in detail.split("survivor_background", 1)[1]


def test_output_held_in_the_worker_is_a_memory_breach(verdicts):
    status, detail = verdicts["reads-everything"]["check-hygiene-attack-table"]
    assert status == "fail"
    assert "memory_flood" in detail and "tripped memory" in detail


def test_each_mistake_fails_only_what_it_breaks(verdicts):
    """The other exercises are the reference answers: their checks still pass."""
    for name, checks in verdicts.items():
        passing_elsewhere = {key for key, (status, _) in checks.items() if status == "pass"}
        assert {"check-parse-attack-table", "check-arguments-attack-table",
                "check-resolve-inside"} <= passing_elsewhere, name
