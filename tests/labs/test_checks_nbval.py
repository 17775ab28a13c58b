"""Grading through nbval: the answer key is the released lab with its passing verdicts.

- the key of every lab stores `✓ check-key` as each check cell's output and marks every other
  cell for nbval to ignore;
- the lab proofs, through nbval: with the reference solution every check cell of the key
  passes; with the released stubs every one fails;
- a graded copy is a plain nbval notebook: strict nbval run by hand gives the verdicts.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat
import pytest

from course.grade import run_nbval
from course.checks import parse_check_cell
from course.labs import (answer_key, cell_key, cell_kind, load_lab, nbval_check_source, nbval_solved,
                         nbval_unsolved)
from course.labs.answer_keys import write_graded
from course.paths import LABS_DIR

LABS = sorted(LABS_DIR.glob("*_lab.ipynb"))


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_the_answer_key_holds_the_passing_verdicts(path):
    lab = load_lab(path)
    key = answer_key(lab)
    code = [c for c in key.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), "nbval compares only run cells"
    for cell in code:
        if cell_kind(cell) == "check":
            assert cell.outputs == [nbformat.v4.new_output("stream", name="stdout", text=f"✓ {cell_key(cell)}\n")]
            assert "nbval-ignore-output" not in cell.metadata.get("tags", [])
        else:
            assert cell.outputs == [] and "nbval-ignore-output" in cell.metadata["tags"]
    released = [c for c in lab.notebook.cells if c.cell_type == "code"]
    assert not any(c.outputs or "nbval-ignore-output" in c.metadata.get("tags", []) for c in released), \
        "building the key leaves the release as it is"


def test_a_bare_check_for_nbval_keeps_the_asserts_and_prints_the_verdict_last():
    source = ('with check("check-add",\n           hint="add returns the sum"):\n'
              '    total = add(2, 3)\n    assert total == 5, f"got {total}"')
    bare = nbval_check_source(source)
    lines = bare.splitlines()
    assert lines[0].startswith("# check-add:") and lines[-1] == "print('✓ check-add')"
    assert "    total = add(2, 3)" in lines and "check(" not in bare.replace("# check-add", "")
    assert lines[lines.index("try:") + 1:lines.index("finally:")] == source.splitlines()[2:]
    assert parse_check_cell(source).key == "check-add"


@pytest.fixture(scope="module")
def proofs():
    """Every lab's reference solution and released stubs, graded through pytest + nbval."""
    with tempfile.TemporaryDirectory(prefix="course-nbval-proofs-") as work:
        work = Path(work)
        copies = []
        for path in LABS:
            lab = load_lab(path)
            for mode, (nb, program) in (("solved", nbval_solved(lab)), ("unsolved", nbval_unsolved(lab))):
                copy = work / mode / lab.lab_id / path.name  # a folder each: the kernel's cwd
                copies.append(write_graded(copy, nb, program, timeout=300))
        from concurrent.futures import ThreadPoolExecutor

        halves = [copies[0::2], copies[1::2]]  # solved and unsolved, two pytest processes
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda args: run_nbval(*args),
                                    [(half, 600, work, f"proofs{k}") for k, half in enumerate(halves)]))
    cases = [case for found, _ in results for case in found]
    return cases, "\n".join(output for _, output in results)


def _checks(cases, student, notebook):
    return [(c["course_key"], c["course_status"], c["course_detail"]) for c in cases
            if c["course_kind"] == "check" and (c["course_student"], c["course_notebook"]) == (student, notebook)]


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_through_nbval_the_reference_solution_reproduces_every_verdict(proofs, path):
    cases, output = proofs
    lab = load_lab(path)
    found = _checks(cases, "(reference solution)", path.name)
    assert [k for k, _, _ in found] == [cell_key(c) for _, c in lab.checks()], output[-2000:]
    assert [(k, s, d) for k, s, d in found if s != "pass"] == []
    others = [c for c in cases if c["course_kind"] != "check" and c["course_student"] == "(reference solution)"
              and c["course_notebook"] == path.name and c["course_status"] != "pass"]
    assert others == [], "every other cell runs cleanly with the solution"


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_through_nbval_every_check_fails_on_the_stubs(proofs, path):
    cases, output = proofs
    lab = load_lab(path)
    found = _checks(cases, "(released stubs)", path.name)
    assert [k for k, _, _ in found] == [cell_key(c) for _, c in lab.checks()], output[-2000:]
    assert [(k, s) for k, s, _ in found if s == "pass"] == []
    assert [(k, d) for k, _, d in found if "NameError" in d] == [], "a check failed for another check's sake"
