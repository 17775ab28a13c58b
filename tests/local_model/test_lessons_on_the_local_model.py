"""The lessons where a 135M model makes sense run top to bottom on it (COURSE_MODEL=local),
outputs not compared, and every figure printed under its name was produced by it.

Which lessons, and why not the others (tried on this machine: 2 cores, shared), is said in
README.md ("A real model on your machine"); LESSONS lists the ones run. (No list of every
lesson here: adding a chapter touches only the files AUTHORING.md names.)
"""
from __future__ import annotations

import pytest

from course.paths import REPO_ROOT
from tests.local_model.lessons import MODEL, run_lesson

# lesson -> what it shows on a real model
LESSONS = {
    "00_start_here": "the set-up check and a first request answered by a real model",
    "07_terminal_sandbox": "an agent given a terminal tool, on a model that answers instead",
    "13_reasoning_and_streaming": "a real model's raw token stream, chunk by chunk",
}


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_the_lesson_runs_on_the_local_model(lesson, local_model_installed, tmp_path):
    run = run_lesson(REPO_ROOT / "notebooks" / f"{lesson}.ipynb", save_to=tmp_path)
    assert run.ran, f"{lesson} on {MODEL} fails in cell {run.failing_cell}: {run.error}"
    assert run.requests > 0, f"{lesson} sent the local model nothing: it measured another model"
    assert not run.mislabelled, (
        f"{lesson} prints figures beside {MODEL}'s name in cells {run.mislabelled}, which sent "
        f"it no request: label them with the model that produced them (course.llm.fresh_targets)")
    printed = (tmp_path / f"{lesson}.local.ipynb").read_text()
    assert f"{MODEL} (your provider)" not in printed, "the local model is not the student's provider"
