"""Every lab both ways: solved (solution injected) every cell passes; unsolved every check fails."""

import pytest

from course.labs import load_lab, run_solved, run_unsolved, solved_problems, unsolved_problems
from course.paths import LABS_DIR

LABS = sorted(LABS_DIR.glob("*_lab.ipynb"))


def test_there_are_labs():
    assert LABS, "no labs found in labs/"


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_lab_passes_with_the_reference_solution(path):
    outcome = run_solved(load_lab(path))
    assert solved_problems(outcome) == []
    assert outcome.checks(), "a lab without checks proves nothing"


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_every_check_fails_on_the_unsolved_lab(path):
    assert unsolved_problems(run_unsolved(load_lab(path))) == []


def test_the_proofs_read_an_english_tally_whatever_the_callers_language(tiny, monkeypatch):
    """The solved/unsolved proofs compare the tally with "K of N checks pass": a maintainer
    whose shell says COURSE_LANGUAGE=zh-CN still gets a true proof, not a Chinese tally."""
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    outcome = run_solved(load_lab(tiny.lab_path))
    assert solved_problems(outcome) == []
    assert outcome.tally_text().startswith(f"{len(outcome.checks())} of {len(outcome.checks())} checks pass")
