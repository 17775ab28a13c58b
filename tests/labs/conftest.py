"""A tiny lab for the grading tests: two exercises, three checks, no teaching model.

It is written into a temporary folder at test time (a committed .ipynb under tests/ would be
collected by nbval as a lesson). Its solution module sits next to it, so the kernel, started
in that folder, can import it for a solved run.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from course.checks import check_source

TINY_LAB = "00_tiny_lab"
SOLUTION = '''\
def add(a, b):
    """Return the sum of a and b."""
    return a + b


def shout(text):
    """Return text in capitals with an exclamation mark."""
    return text.upper() + "!"
'''
STUBS = {
    "add": 'def add(a, b):\n    """Return the sum of a and b."""\n    raise NotImplementedError("write add")',
    "shout": 'def shout(text):\n    """Return text in capitals with an exclamation mark."""\n'
             '    raise NotImplementedError("write shout")',
}
CHECKS = {
    "check-add-pair": ("add(a, b) returns the sum of its two numbers",
                       'total = add(*PAIR)\nassert total == 5, f"add(2, 3) should be 5; got {total!r}"'),
    "check-add-negative": ("add must work for negative numbers too",
                           'assert add(-2, 2) == 0, f"add(-2, 2) should be 0; got {add(-2, 2)!r}"'),
    "check-shout": ("shout(text) returns the text in capitals followed by '!'",
                    'loud = shout("hi")\nassert loud == "HI!", f"shout(\'hi\') should be \'HI!\'; got {loud!r}"'),
}
SOLVED = {"add": SOLUTION.split("\n\n\n")[0], "shout": SOLUTION.split("\n\n\n")[1]}


def tiny_lab_notebook() -> nbformat.NotebookNode:
    new_code, new_md = nbformat.v4.new_code_cell, nbformat.v4.new_markdown_cell

    def exercise(key):
        return new_code(STUBS[key], metadata={"tags": ["exercise"], "course": {"key": key}})

    def check(key):
        hint, body = CHECKS[key]
        return new_code(check_source(key, hint, body), metadata={"tags": ["check"], "course": {"key": key}})

    cells = [new_md("# A tiny lab"),
             new_code("from course.checks import check, tally\n\nPAIR = (2, 3)"),
             exercise("add"), check("check-add-pair"), check("check-add-negative"),
             exercise("shout"), check("check-shout"),
             new_code(f'tally("{TINY_LAB}")', metadata={"tags": ["tally"]})]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["course"] = {"lab": TINY_LAB, "solution_module": "tiny_solution"}
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    return nb


@dataclass
class Tiny:
    labs_dir: Path

    @property
    def lab_path(self) -> Path:
        return self.labs_dir / f"{TINY_LAB}.ipynb"

    def submission(self, answers: dict | None = None, edit_checks=None) -> nbformat.NotebookNode:
        """A student's copy: exercise cells replaced by `answers[key]` (source text)."""
        nb = nbformat.read(self.lab_path, as_version=4)
        for cell in nb.cells:
            tags = cell.metadata.get("tags", [])
            key = cell.metadata.get("course", {}).get("key")
            if "exercise" in tags and answers and key in answers:
                cell.source = textwrap.dedent(answers[key])
            if "check" in tags and edit_checks:
                cell.source = edit_checks(cell.source)
        return nb


@pytest.fixture(scope="session")
def tiny(tmp_path_factory) -> Tiny:
    folder = tmp_path_factory.mktemp("tiny_labs")
    nbformat.write(tiny_lab_notebook(), folder / f"{TINY_LAB}.ipynb")
    (folder / "tiny_solution.py").write_text(SOLUTION, encoding="utf-8")
    return Tiny(folder)


def grade_one(lab, student: nbformat.NotebookNode, timeout: float = 60) -> dict[str, tuple[str, str]]:
    """check key -> (status, detail) for one student copy graded as course.grade grades it:
    its graded copy of the answer key, run by pytest + strict nbval in a fresh folder."""
    from course.grade.nbval_engine import grade_copy
    from course.labs import nbval_graded

    nb, program, _ = nbval_graded(lab, student, "student", lab.path.name)
    found, output = grade_copy(lab, nb, program, timeout)
    assert not any(status == "not graded" for status, _ in found.values()), output[-2000:]
    return found


def worker_class(tmp_path_factory, adds: dict[str, str], name: str) -> tuple[Path, Path]:
    """(labs folder, class folder) for a class of the tiny lab graded in the worker: a folder
    per student named by `adds`, whose `add` exercise holds `adds[student]` and `shout` the
    solution."""
    labs = tmp_path_factory.mktemp(f"{name}_labs")
    nb = tiny_lab_notebook()
    nb.metadata["course"]["worker"] = True
    nbformat.write(nb, labs / f"{TINY_LAB}.ipynb")
    subs = tmp_path_factory.mktemp(name)
    for student, add in adds.items():
        copy = nbformat.read(labs / f"{TINY_LAB}.ipynb", as_version=4)
        for cell in copy.cells:
            if "exercise" in cell.metadata.get("tags", []):
                cell.source = add if cell.metadata.get("course", {}).get("key") == "add" else SOLVED["shout"]
        (subs / student).mkdir()
        nbformat.write(copy, subs / student / f"{TINY_LAB}.ipynb")
    return labs, subs
