"""What goes back to the students (issue 46, item 4): each graded notebook shows the verdicts the
gradebook holds (it was the answer key with the student's cells in, so ✓ under every check,
failed ones included), and feedback/<student>.md beside the gradebook gives each student their
scores, each failed check's reason and their notes.

A class of the tiny lab graded once as every lab is (its exercises in a worker, --unconfined:
nothing here is about the sandbox): ada solved it, bea's `add` is wrong, chen handed it back
untouched, dave's file is broken.
"""
from __future__ import annotations

import csv

import nbformat
import pytest

from course.grade.student_text import md
from course.labs import cell_key, cell_kind
from tests.labs.conftest import SOLVED, TINY_LAB
from tests.labs.test_grading import grade_here, hand_in, worker_class, worker_tiny_lab

WRONG_ADD = "def add(a, b):\n    return a - b\n"


@pytest.fixture(scope="module")
def fed_back(tmp_path_factory):
    base = tmp_path_factory.mktemp("feedback")
    labs, subs = worker_class(base)
    nbformat.write(hand_in(labs, SOLVED), subs / "ada.ipynb")
    nbformat.write(hand_in(labs, {**SOLVED, "add": WRONG_ADD}), subs / "bea.ipynb")
    nbformat.write(hand_in(labs, {}), subs / "chen.ipynb")
    (subs / "dave.ipynb").write_text('{"cells": [', encoding="utf-8")
    grade_here(subs, "--labs", labs, "--timeout", "30", "--jobs", "1", "--unconfined")  # into subs
    rows = list(csv.DictReader((subs / "gradebook.csv").open(encoding="utf-8")))
    return subs, rows


def verdicts_shown(copy) -> dict[str, str]:
    """check key -> the text shown under that check cell in a graded notebook."""
    nb = nbformat.read(copy, as_version=4)
    return {cell_key(c): "".join(o.get("text", "") for o in c.outputs)
            for c in nb.cells if cell_kind(c) == "check"}


def test_a_graded_notebook_shows_the_gradebooks_verdicts(fed_back):
    subs, rows = fed_back
    bea = {r["check"]: r for r in rows if r["student"] == "bea"}
    assert {c: r["status"] for c, r in bea.items()} == {
        "check-add-pair": "fail", "check-add-negative": "fail", "check-shout": "pass"}
    shown = verdicts_shown(subs / "graded-notebooks" / "bea" / f"{TINY_LAB}.ipynb")
    assert shown["check-shout"] == "✓ check-shout\n"
    for check in ("check-add-pair", "check-add-negative"):
        assert shown[check] == f"✗ {check} (fail): {bea[check]['detail']}\n"
        assert "✓" not in shown[check]
    ada = verdicts_shown(subs / "graded-notebooks" / "ada" / f"{TINY_LAB}.ipynb")
    assert ada == {key: f"✓ {key}\n" for key in ada} and len(ada) == 3


def test_a_graded_notebook_shows_the_code_that_was_graded_and_the_score(fed_back):
    subs, _ = fed_back
    nb = nbformat.read(subs / "graded-notebooks" / "bea" / f"{TINY_LAB}.ipynb", as_version=4)
    add = next(c for c in nb.cells if cell_kind(c) == "exercise" and cell_key(c) == "add")
    assert WRONG_ADD in "".join(o.get("text", "") for o in add.outputs)
    assert nb.cells[0].cell_type == "markdown" and "Graded: 1 / 3 points" in nb.cells[0].source


def test_each_student_has_a_feedback_file_with_scores_reasons_and_notes(fed_back):
    subs, rows = fed_back
    folder = subs / "feedback"
    assert sorted(p.name for p in folder.glob("*.md")) == ["ada.md", "bea.md", "chen.md", "dave.md"]
    bea = (folder / "bea.md").read_text(encoding="utf-8")
    assert "| 00_tiny_lab | 1 / 3 |" in bea and "**1 / 3**" in bea
    for r in rows:
        if r["student"] == "bea" and r["status"] != "pass":
            assert f"✗ {r['check']} (fail): {md(r['detail'])}" in bea
    assert "note: graded --unconfined" in bea
    assert "ada" not in bea and "chen" not in bea  # nobody else's results
    assert "Every check of the labs you handed in passed." in (folder / "ada.md").read_text(encoding="utf-8")
    assert "not attempted" in (folder / "chen.md").read_text(encoding="utf-8")
    assert "not graded" in (folder / "dave.md").read_text(encoding="utf-8")
    assert "broken JSON" in (folder / "dave.md").read_text(encoding="utf-8")


def test_a_rerun_regrades_the_same_class_and_skips_its_own_feedback(fed_back, tmp_path):
    subs, rows = fed_back
    labs = worker_tiny_lab(tmp_path / "labs")
    grade_here(subs, "--labs", labs, "--timeout", "30", "--jobs", "1", "--unconfined", "--output", tmp_path / "out")
    again = list(csv.DictReader((tmp_path / "out" / "gradebook.csv").open(encoding="utf-8")))
    assert {r["student"] for r in again} == {"ada", "bea", "chen", "dave"}
    assert again == rows
