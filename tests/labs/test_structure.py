"""The course's layout rules: names, labs without outputs, exercises resolving to solutions."""
import importlib
import re
from pathlib import Path

import nbformat
import pytest

from course.labs import LAB_NAME, cell_key, cell_kind, load_lab
from course.paths import REPO_ROOT

ROOT = REPO_ROOT
LESSON_NAME = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")
LABS = sorted((ROOT / "labs").glob("*.ipynb"))
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_file_names_follow_the_nn_slug_pattern():
    assert [p.name for p in LABS if not LAB_NAME.match(p.name)] == []
    assert [p.name for p in LESSONS if not LESSON_NAME.match(p.name)] == []


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_lab_structure(path):
    lab = load_lab(path)
    assert lab.lab_id == path.stem, "the lab id in the metadata must be the file name"
    assert (ROOT / "notebooks" / (path.stem[: -len("_lab")] + ".ipynb")).exists(), "a lab needs its lesson"
    module = importlib.import_module(lab.solution_module)
    code = [c for c in lab.notebook.cells if c.cell_type == "code"]
    assert [c.outputs for c in code if c.outputs] == [], "labs are released without outputs"
    assert all(c.execution_count is None for c in code), "labs are released unexecuted"
    exercises, checks = lab.exercises(), lab.checks()
    assert exercises and checks
    for _, cell in exercises:
        assert callable(getattr(module, cell_key(cell), None)), \
            f"exercise {cell_key(cell)!r} has no function in {lab.solution_module}"
        assert "NotImplementedError" in cell.source, "an exercise cell holds a stub"
    keys = [cell_key(c) for _, c in checks]
    assert all(keys) and len(keys) == len(set(keys)), "every check needs its own stable key"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_lessons_are_executed_and_carry_no_lab_cells(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code), "run the lesson to store its outputs"
    assert not any(cell_kind(c) for c in nb.cells), "exercise/check cells belong in labs"
