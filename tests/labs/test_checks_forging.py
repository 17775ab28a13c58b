"""An exercise cell cannot turn a failing check into a pass when graded.

Each student of this class writes a wrong `add` (it returns -1) and then tries to forge the
verdicts from their exercise cell: rebinding `check`, patching `course.checks`, printing and
displaying fake verdicts, patching IPython's display, hiding the error, writing the exact
verdict nbval expects to the cell's own output while hiding the error, blanking the check
cells before they run, and printing the verdict read from the running check's code. Graded (nbval
against the answer key), every one of them scores nothing; an honest student with the right `add` scores its two checks. (In their own notebook
the forgers fool only themselves: the grader never reads the verdicts a student sees.)
"""
from __future__ import annotations

import csv

import pytest

import course.grade

WRONG = "def add(a, b):\n    return -1\n"
FORGERS = {
    "rebinds_check": WRONG + (
        "import contextlib\n\n"
        "def check(key, hint=''):\n"
        "    print('✓', key)\n"
        "    return contextlib.suppress(Exception)\n"),
    "patches_course_checks": WRONG + (
        "import course.checks\n\n"
        "def _always_pass(self, *exc):\n"
        "    course.checks.show(course.checks.Verdict(self.key, True))\n"
        "    return True\n\n"
        "course.checks.check.__exit__ = _always_pass\n"),
    "prints_fake_verdicts": WRONG + (
        "from IPython.display import display\n\n"
        "for key in ('check-add-pair', 'check-add-negative', 'check-shout'):\n"
        "    print('✓', key)\n"
        "    display({'text/plain': '✓ ' + key, 'application/vnd.course.check+json':\n"
        "             {'key': key, 'passed': True, 'message': '', 'error': None}}, raw=True)\n"),
    "patches_display": WRONG + (
        "import IPython.display\n"
        "import course.checks\n\n"
        "def fake_display(*args, **kwargs):\n"
        "    print('✓ check-add-pair')\n\n"
        "IPython.display.display = fake_display\n"
        "course.checks.display = fake_display\n"
        "get_ipython().display_pub.publish = lambda *args, **kwargs: None\n"),
    "hides_errors": WRONG + (
        "ip = get_ipython()\n"
        "ip.set_custom_exc((BaseException,), lambda shell, etype, value, tb, tb_offset=None: None)\n"
        "ip.showtraceback = lambda *args, **kwargs: None\n"),
    "blanks_later_cells": WRONG + (
        "get_ipython().input_transformers_cleanup.append(lambda lines: [])\n"),
    "prints_the_verdict_and_hides_the_error": (
        "import sys\n"
        "_real_stdout = sys.stdout  # the cell's own output stream, before any capture\n"
        "get_ipython().set_custom_exc((BaseException,), lambda shell, etype, value, tb, tb_offset=None: None)\n\n"
        "def add(a, b):\n"
        "    for line in get_ipython().user_ns['In'][-1].splitlines():  # the running check's source\n"
        "        if line.startswith(\"print('✓ \"):\n"
        "            _real_stdout.write(line[len(\"print('\"):-2] + '\\n')  # exactly what nbval expects\n"
        "            _real_stdout.flush()\n"
        "    return -1\n"),
    "reads_the_verdict_from_the_call_stack": (
        "import sys\n\n"
        "def add(a, b):\n"
        "    caller = sys._getframe(1)  # the bare check: its last line prints the verdict\n"
        "    for const in caller.f_code.co_consts:\n"
        "        if isinstance(const, str) and const.startswith('\u2713 '):\n"
        "            print(const)\n"
        "    return -1\n"),
}
HONEST = "def add(a, b):\n    return a + b\n"


@pytest.fixture(scope="module")
def forged_class(tiny, tmp_path_factory):
    subs = tmp_path_factory.mktemp("forgers")
    import nbformat

    for name, source in FORGERS.items():
        nbformat.write(tiny.submission({"add": source}), subs / f"{name}.ipynb")
    nbformat.write(tiny.submission({"add": HONEST}), subs / "honest.ipynb")
    assert course.grade.main([str(subs), "--labs", str(tiny.labs_dir), "--timeout", "30", "--jobs", "2"]) == 0
    rows = list(csv.DictReader((subs / "gradebook.csv").open(encoding="utf-8")))
    return rows, (subs / "gradebook.md").read_text(encoding="utf-8")


def test_the_honest_student_scores_what_they_wrote(forged_class):
    rows, _ = forged_class
    mine = {r["check"]: r["status"] for r in rows if r["student"] == "honest"}
    assert mine == {"check-add-pair": "pass", "check-add-negative": "pass", "check-shout": "fail"}


@pytest.mark.parametrize("forger", sorted(FORGERS))
def test_a_forged_verdict_earns_nothing(forged_class, forger):
    rows, _ = forged_class
    mine = [r for r in rows if r["student"] == forger]
    assert [r["check"] for r in mine] == ["check-add-pair", "check-add-negative", "check-shout"]
    assert [(r["check"], r["status"], r["earned"]) for r in mine if r["status"] == "pass"] == []


def test_the_wrong_answer_is_reported_as_such(forged_class):
    rows, _ = forged_class
    detail = {r["student"]: r["detail"] for r in rows if r["check"] == "check-add-pair"}
    for forger in ("rebinds_check", "patches_course_checks", "prints_fake_verdicts", "patches_display",
                   "hides_errors", "prints_the_verdict_and_hides_the_error",
                   "reads_the_verdict_from_the_call_stack"):
        assert detail[forger] == "add(2, 3) should be 5; got -1", forger
    assert "did not run to its end" in detail["blanks_later_cells"]


def test_reaching_into_the_machinery_is_pointed_out(forged_class):
    _, summary = forged_class
    for forger in ("patches_course_checks", "patches_display", "hides_errors", "blanks_later_cells",
                   "prints_the_verdict_and_hides_the_error", "reads_the_verdict_from_the_call_stack"):
        section = summary.split(f"### {forger}")[1].split("###")[0]
        assert "reaches into the notebook's machinery" in section, forger
