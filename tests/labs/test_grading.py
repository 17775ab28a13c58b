"""Grading a class: restored checks, timeouts, broken files, all in one gradebook."""
import csv
import inspect
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import solutions.agent_loop
from course.labs import cell_key, cell_kind, graded, load_lab, read_notebook, LabError
from course.paths import REPO_ROOT

ROOT = REPO_ROOT
LAB = ROOT / "labs" / "01_agent_loop_lab.ipynb"
SOLUTION_SOURCE = inspect.getsource(solutions.agent_loop)


def submission(answers: dict, edit_checks=None) -> nbformat.NotebookNode:
    """A student's copy of lab 01: exercise cells replaced by `answers[key]`."""
    nb = nbformat.read(LAB, as_version=4)
    for cell in nb.cells:
        if cell_kind(cell) == "exercise" and cell_key(cell) in answers:
            cell.source = answers[cell_key(cell)]
        if cell_kind(cell) == "check" and edit_checks:
            cell.source = edit_checks(cell.source)
    return nb


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    subs = tmp_path_factory.mktemp("submissions")
    nbformat.write(submission({"validate_messages": SOLUTION_SOURCE, "run_agent": SOLUTION_SOURCE}),
                   subs / "alice.ipynb")
    (subs / "bob").mkdir()  # right validator, stub loop, and every check weakened to `pass`
    nbformat.write(submission({"validate_messages": SOLUTION_SOURCE}, edit_checks=lambda s: "pass"),
                   subs / "bob" / "lab01.ipynb")
    loop = "def run_agent(client, messages, tools, execute_tool, max_iterations=10):\n    while True:\n        pass"
    nbformat.write(submission({"validate_messages": SOLUTION_SOURCE, "run_agent": loop}), subs / "carol.ipynb")
    (subs / "dave.ipynb").write_text('{"cells": [', encoding="utf-8")  # corrupt
    other = submission({})
    other.metadata["course"]["lab"] = "99_elsewhere_lab"
    nbformat.write(other, subs / "erin.ipynb")
    (subs / "frank").mkdir()  # empty folder
    cheat = "from solutions.agent_loop import run_agent, validate_messages"
    nbformat.write(submission({"validate_messages": cheat, "run_agent": cheat}), subs / "gina.ipynb")
    out = tmp_path_factory.mktemp("out")
    done = subprocess.run([sys.executable, "-m", "course.grade", str(subs), "--timeout", "4",
                           "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader((out / "gradebook.csv").open(encoding="utf-8")))
    return done.stdout, rows, (out / "gradebook.md").read_text(encoding="utf-8")


def score(rows, student):
    mine = [r for r in rows if r["student"] == student]
    return sum(float(r["earned"]) for r in mine), sum(float(r["points"] or 0) for r in mine)


def test_correct_submission_scores_full_marks(gradebook):
    _, rows, _ = gradebook
    assert score(rows, "alice") == (8, 8)


def test_weakened_checks_are_restored(gradebook):
    _, rows, _ = gradebook
    bob = {r["check"]: r["status"] for r in rows if r["student"] == "bob"}
    assert score(rows, "bob") == (5, 8)  # the five validator checks; the loop checks came back and fail
    assert bob["check-agent-vancouver"] == "fail"


def test_an_infinite_loop_costs_its_checks_not_the_run(gradebook):
    _, rows, _ = gradebook
    carol = {r["check"]: r["status"] for r in rows if r["student"] == "carol"}
    assert carol["check-agent-vancouver"] == "timeout"
    assert score(rows, "carol") == (5, 8)


def test_broken_input_is_reported_per_student(gradebook):
    stdout, rows, summary = gradebook
    reasons = {r["student"]: r["detail"] for r in rows if r["status"] == "not graded"}
    assert set(reasons) == {"dave", "erin", "frank"}
    assert "broken JSON" in reasons["dave"]
    assert "99_elsewhere_lab" in reasons["erin"] and "not a notebook of any released lab" in reasons["erin"]
    assert "no .ipynb" in reasons["frank"]
    assert "[7/7]" in stdout and "NOT GRADED" in stdout
    assert "| alice | 01_agent_loop_lab | 8 / 8 |" in summary


def test_importing_the_reference_solution_earns_nothing(gradebook):
    _, rows, summary = gradebook
    assert score(rows, "gina") == (0, 8)
    assert "imports the reference solutions" in summary


def test_graded_copy_takes_only_exercises_from_the_student():
    lab = load_lab(LAB)
    student = submission({"run_agent": "def run_agent(*a, **k):\n    return 1"}, edit_checks=lambda s: "pass")
    student.cells[0].source = "tampered setup"
    nb, notes = graded(lab, student)
    by_index = {i: c.source for i, c in enumerate(nb.cells)}
    for i, cell in enumerate(lab.notebook.cells):
        if cell_kind(cell) == "exercise" and cell_key(cell) == "run_agent":
            assert by_index[i] == "def run_agent(*a, **k):\n    return 1"
        else:
            assert by_index[i] == cell.source
    assert notes == []


@pytest.mark.parametrize("content,reason", [
    (b"", "is empty"), (b"\xff\xfe", "not UTF-8"), (b"[1, 2]", "not a notebook"),
    (b'{"cells": "x"}', "not a notebook"), (b'{"cells": [{"cell_type": "nope"}], "nbformat": 4, '
                                           b'"nbformat_minor": 5, "metadata": {}}', "not a valid notebook"),
])
def test_unreadable_notebooks_have_clear_reasons(tmp_path, content, reason):
    path = tmp_path / "x.ipynb"
    path.write_bytes(content)
    with pytest.raises(LabError, match=reason):
        read_notebook(path)
