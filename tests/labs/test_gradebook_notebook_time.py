"""One notebook cannot hold the class (issue 47): all the cells of a notebook together get
--notebook-timeout seconds, and once they are spent its remaining checks fail at once, saying why.

The attack: an exercise cell that sleeps when it is run. Every lab runs its exercises in a
worker, started by the first exercise cell; the worker's start waits up to 120 s, and each later
exercise cell starts it again, so this notebook used to cost 120 s per exercise (8 minutes for
lab 04) whatever --timeout said. Graded here with --notebook-timeout 5, it stops when its 5 s
are spent; nothing in this test measures time.
"""
from __future__ import annotations

import csv
import subprocess
import sys

import nbformat

from tests.labs.conftest import SOLVED, TINY_LAB
from tests.labs.test_grading import grade_here, hand_in, worker_class

SLEEPS = "import time\ntime.sleep(10**6)\n\n" + SOLVED["add"]


def test_a_sleeping_exercise_costs_the_notebook_its_time_bound_not_the_class(tmp_path):
    labs, subs = worker_class(tmp_path)
    nbformat.write(hand_in(labs, {**SOLVED, "add": SLEEPS}), subs / "sleeper.ipynb")
    grade_here(subs, "--labs", labs, "--timeout", "2", "--notebook-timeout", "5", "--jobs", "1",
               "--unconfined", "--output", tmp_path / "out")
    rows = list(csv.DictReader((tmp_path / "out" / "gradebook.csv").open(encoding="utf-8")))
    assert {r["check"]: r["status"] for r in rows} == {
        "check-add-pair": "timeout", "check-add-negative": "timeout", "check-shout": "timeout"}
    for r in rows:  # checks after the budget are not run: none waited for the worker
        assert r["detail"].startswith("Timeout: not run: this notebook's cells had used up the 5 s"), r
    summary = (tmp_path / "out" / "gradebook.md").read_text(encoding="utf-8")
    assert "used up the 5 s they get in all (--notebook-timeout)" in summary
    shown = nbformat.read(tmp_path / "out" / "graded-notebooks" / "sleeper" / f"{TINY_LAB}.ipynb", as_version=4)
    assert "--notebook-timeout" in "".join(o.get("text", "") for c in shown.cells for o in c.get("outputs", []))


def test_the_notebook_time_bound_is_documented_in_the_help():
    done = subprocess.run([sys.executable, "-m", "course.grade", "--help"], capture_output=True, text=True)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "--notebook-timeout SECONDS" in text
    assert "seconds for all the cells of one notebook together (default: 300, or 5 x --timeout if more)" in text
