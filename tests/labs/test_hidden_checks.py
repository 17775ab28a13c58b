"""Hidden checks (issue 52, item 5): a lab's answer key may hold checks never released (metadata
`course.hidden: true`, held-out tests of the same exercises). The release leaves them out and says
how many grading adds; grading, which reads the instructor's copy of the lab, runs them like the
others."""
from __future__ import annotations

import csv
import json

import nbformat
import pytest

from course.checks import check_source
from course.labs import cell_kind, find_released_labs
from course.release import is_lab, without_hidden_checks
from tests.labs.conftest import SOLUTION, SOLVED, TINY_LAB, tiny_lab_notebook
from tests.labs.test_grading import grade_here

HIDDEN = ("check-add-large", "add works for large numbers too",
          'assert add(10**20, 1) == 10**20 + 1, f"add(10**20, 1) should be 10**20 + 1; got {add(10**20, 1)!r}"')


def lab_with_hidden_check() -> nbformat.NotebookNode:
    nb = tiny_lab_notebook()
    key, hint, body = HIDDEN
    cell = nbformat.v4.new_code_cell(check_source(key, hint, body),
                                     metadata={"tags": ["check"], "course": {"key": key, "hidden": True}})
    nb.cells.insert(5, cell)  # after the add checks, before the shout exercise
    return nb


def test_the_release_leaves_hidden_checks_out_and_says_how_many():
    source = nbformat.writes(lab_with_hidden_check()).encode("utf-8")
    released = nbformat.reads(without_hidden_checks(source).decode("utf-8"), as_version=4)
    keys = [c.metadata["course"]["key"] for c in released.cells if cell_kind(c) == "check"]
    assert keys == ["check-add-pair", "check-add-negative", "check-shout"]
    assert "check-add-large" not in json.dumps(released) and "10**20" not in json.dumps(released)
    assert released.metadata["course"]["hidden_checks"] == 1
    note = [c for c in released.cells if c.cell_type == "markdown" and "hidden check" in c.source]
    assert len(note) == 1 and note[0].source.startswith("**Grading adds 1 hidden check**")
    assert "tally" in released.cells[released.cells.index(note[0]) + 1].metadata.get("tags", [])
    chinese = json.loads(without_hidden_checks(source, chinese=True))
    assert any("评分时还会运行 1 个隐藏检查项" in "".join(c["source"]) for c in chinese["cells"])


def test_a_lab_without_hidden_checks_is_released_byte_for_byte():
    source = nbformat.writes(tiny_lab_notebook()).encode("utf-8")
    assert without_hidden_checks(source) is source


@pytest.mark.parametrize("path, lab", [("labs/01_agent_loop_lab.ipynb", True),
                                       ("zh-CN/labs/01_agent_loop_lab.ipynb", True),
                                       ("notebooks/01_agent_loop.ipynb", False),
                                       ("docs/labs/x_lab.ipynb", False)])
def test_which_released_files_are_labs(path, lab):
    assert is_lab(path) is lab


def test_grading_runs_the_hidden_checks(tmp_path):
    labs = tmp_path / "labs"
    labs.mkdir()
    nbformat.write(lab_with_hidden_check(), labs / f"{TINY_LAB}.ipynb")
    (labs / "tiny_solution.py").write_text(SOLUTION, encoding="utf-8")
    released = nbformat.reads(without_hidden_checks(
        (labs / f"{TINY_LAB}.ipynb").read_bytes()).decode("utf-8"), as_version=4)
    subs = tmp_path / "subs"
    subs.mkdir()
    for student, add in (("ada", SOLVED["add"]), ("bea", "def add(a, b):\n    return float(a) + float(b)")):
        copy = nbformat.from_dict(json.loads(json.dumps(released)))  # the student's copy: no hidden check
        for cell in copy.cells:
            if cell_kind(cell) == "exercise":
                cell.source = add if cell.metadata["course"]["key"] == "add" else SOLVED["shout"]
        nbformat.write(copy, subs / f"{student}.ipynb")
    assert len(find_released_labs(labs)[TINY_LAB].checks()) == 4
    grade_here(subs, "--labs", labs, "--lessons", tmp_path, "--timeout", "30", "--jobs", "1",
               "--output", tmp_path / "out")
    rows = list(csv.DictReader((tmp_path / "out" / "gradebook.csv").open(encoding="utf-8")))
    verdicts = {(r["student"], r["check"]): r["status"] for r in rows}
    assert verdicts[("ada", "check-add-large")] == "pass"
    assert verdicts[("bea", "check-add-large")] == "fail"  # floats lose 10**20 + 1
    assert verdicts[("bea", "check-add-pair")] == "pass"   # what bea could see passed
