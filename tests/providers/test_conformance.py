"""Every lesson runs top to bottom, and every lab passes its checks with the reference solution,
against each provider shape (tests/providers/proxy.py), and no lesson prints a figure under the
provider's name that the provider did not produce.

Slow (every lesson three times, about an hour), so not part of the default suite: enable it with
COURSE_CONFORMANCE=1, e.g.

    COURSE_CONFORMANCE=1 .venv/bin/python -m pytest tests/providers/test_conformance.py

COURSE_CONFORMANCE=rotate runs every lesson and lab under one shape only, taking the shapes in
turn (lesson 00 ollama, 01 deepseek, 02 openai, ...), so each notebook and each shape is covered
in a third of the time; CI (.ci/run) runs that.

An environment variable rather than `-m "not providers"` in pyproject's addopts: a `-m` given on
the command line (`./run.sh test -m "not browser"`) replaces the one in addopts, which would
start this hour-long run unasked. `python -m tests.providers.table` prints the same results as
a table lesson x shape.
"""
import os

import pytest

from tests.providers.conformance import labs, lessons, run_lab, run_lesson
from tests.providers.proxy import SHAPES, ProviderProxy

MODE = os.environ.get("COURSE_CONFORMANCE", "")

pytestmark = [
    pytest.mark.providers,
    pytest.mark.skipif(MODE not in ("1", "rotate"),
                       reason="provider conformance runs only with COURSE_CONFORMANCE=1 or rotate"),
]


def pairs(notebooks):
    """(notebook, shape) to run: every shape, or with `rotate` one shape per notebook in turn."""
    if MODE == "rotate":
        return [pytest.param(nb, SHAPES[i % len(SHAPES)], id=f"{nb.stem}-{SHAPES[i % len(SHAPES)]}")
                for i, nb in enumerate(notebooks)]
    return [pytest.param(nb, shape, id=f"{nb.stem}-{shape}") for nb in notebooks for shape in SHAPES]


@pytest.mark.parametrize(("lesson", "shape"), pairs(lessons()))
def test_lesson_runs_against_the_shape(lesson, shape):
    with ProviderProxy(shape) as proxy:
        result = run_lesson(lesson, proxy)
    assert result.ran, (f"{lesson.name} under the {shape} shape fails in cell "
                        f"{result.failing_cell}: {result.error}")
    assert not result.mislabelled, (
        f"{lesson.name} under the {shape} shape prints figures beside the provider's model name "
        f"in cells {result.mislabelled}, which sent the provider no request: label them with "
        f"the model that produced them (course.llm.fresh_targets)")


@pytest.mark.parametrize(("lab", "shape"), pairs(labs()))
def test_solved_lab_passes_against_the_shape(lab, shape):
    with ProviderProxy(shape) as proxy:
        result = run_lab(lab, proxy)
    assert result.ran, (f"{lab.name} (solved) under the {shape} shape fails in cell "
                        f"{result.failing_cell}: {result.error}")
