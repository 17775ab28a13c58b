"""The instructor's sheets (issue 52): a mistake in a roster, deadlines or overrides sheet is a clear
error naming its file and line, raised before anything is graded; the late policy's arithmetic."""
from __future__ import annotations

from datetime import datetime, timezone

import nbformat
import pytest

from course.grade.late import days_late, parse_policy, read_deadlines
from course.grade.overrides import read_overrides
from course.grade.roster import read_roster
from course.grade.rubric import read_rubric_scores
from course.grade.sheets import SheetError
from course.grade.similarity import similar_pairs
from course.grade.submissions import Submission
from course.labs import find_released_labs
from tests.labs.conftest import TINY_LAB


def sheet(tmp_path, text: str):
    path = tmp_path / "sheet.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, message", [
    ("student_id,name,email\ns1,A,a@x\n", "missing: folder"),
    ("student_id,name,email,folder,nickname\n", "unknown: nickname"),
    ("student_id,name,email,folder\ns1,A,a@x,ada\ns2,B,b@x,ada\n", "line 3: folder 'ada' is also on line 2"),
    ("student_id,name,email,folder\n,A,a@x,ada\n", "line 2: no student_id"),
])
def test_a_bad_roster_says_what_and_where(tmp_path, text, message):
    with pytest.raises(SheetError, match=message):
        read_roster(sheet(tmp_path, text))


@pytest.mark.parametrize("text, message", [
    (f"lab,deadline\n{TINY_LAB},2026-10-01T23:59\n", "has no time zone"),
    (f"lab,deadline\n{TINY_LAB},next friday\n", "is not a date and time"),
    ("lab,deadline\n99_nope_lab,2026-10-01T23:59Z\n", "no released lab '99_nope_lab'"),
    (f"lab,deadline,student,extension\n{TINY_LAB},,ada,2\n", "which has no deadline row"),
    (f"lab,deadline,student,extension\n{TINY_LAB},2026-10-01T23:59Z,,\n{TINY_LAB},,ada,two\n", "not a number of days"),
])
def test_bad_deadlines_say_what_and_where(tmp_path, text, message):
    with pytest.raises(SheetError, match=message):
        read_deadlines(sheet(tmp_path, text), {TINY_LAB})


def test_an_extension_moves_one_students_deadline(tmp_path):
    deadlines = read_deadlines(sheet(tmp_path, f"lab,deadline,student,extension\n{TINY_LAB},2026-10-01T23:59Z,,\n"
                                               f"{TINY_LAB},,ada,1.5\n"), {TINY_LAB})
    assert deadlines.of("ada", TINY_LAB)[0] == datetime(2026, 10, 3, 11, 59, tzinfo=timezone.utc)
    assert deadlines.of("bea", TINY_LAB) == (datetime(2026, 10, 1, 23, 59, tzinfo=timezone.utc), "")


def test_days_late_count_started_days():
    deadline = datetime(2026, 10, 1, 23, 59, tzinfo=timezone.utc)
    assert [days_late(deadline.replace(day=d, hour=h, minute=m), deadline)
            for d, h, m in ((1, 23, 59), (2, 0, 0), (2, 23, 59), (3, 0, 0))] == [0, 1, 1, 2]


def test_the_policy_caps_and_refuses():
    assert parse_policy("10%/day,max=25%").percent(5) == 25
    assert parse_policy("10%/day").percent(3) == 30
    assert parse_policy("not-accepted").percent(1) == 100
    assert parse_policy("report").percent(9) == 0
    with pytest.raises(ValueError, match="--late-policy takes"):
        parse_policy("10 per day")


@pytest.mark.parametrize("row, message", [
    (f"ada,{TINY_LAB},check-nope,pass,,why", "has no check 'check-nope'"),
    (f"ada,{TINY_LAB},check-shout,pass,,", "needs its reason"),
    (f"ada,{TINY_LAB},check-shout,maybe,,why", "neither pass nor fail"),
    (f"ada,{TINY_LAB},check-shout,,2,why", "outside 0 to 1"),
    (f"ada,{TINY_LAB},check-shout,,,why", "give a verdict"),
])
def test_bad_overrides_say_what_and_where(tiny, tmp_path, row, message):
    labs = find_released_labs(tiny.labs_dir)
    with pytest.raises(SheetError, match=message):
        read_overrides(sheet(tmp_path, f"student,lab,check,verdict,points,reason\n{row}\n"), labs)


def test_kept_stub_code_is_not_evidence_of_copying(tiny, tmp_path):
    """Two students who kept a long stub and wrote different code are not alike; the stub alone
    would make them so if it were not left out."""
    labs = find_released_labs(tiny.labs_dir)
    lab = labs[TINY_LAB]
    helper = ("    checked = []\n    for item in (a, b):\n        if not isinstance(item, (int, float)):\n"
              "            raise TypeError('numbers only, got ' + repr(item))\n        checked.append(item)\n")
    subs = []
    for student, body in (("ada", "    return checked[0] + checked[1]"),
                          ("bea", "    total = 0\n    while checked:\n        total += checked.pop()\n    return total")):
        nbformat.write(tiny.submission({"add": "def add(a, b):\n" + helper + body}),
                       tmp_path / f"{student}.ipynb")
        subs.append(Submission(student, f"{student}.ipynb", lab=TINY_LAB))
    alike = similar_pairs(subs, tmp_path, labs, 0.5)
    assert [(p["a"], p["b"]) for p in alike] == [("ada", "bea")]  # the shared lines are no stub's
    for _, cell in lab.exercises():  # now the release's stub holds those lines: they are left out
        if cell.metadata["course"]["key"] == "add":
            cell.source = "def add(a, b):\n" + helper + "    raise NotImplementedError('write add')"
    assert similar_pairs(subs, tmp_path, labs, 0.5) == []


@pytest.mark.parametrize("rows, message", [
    ("ada,00_tiny,think-1,3,2,", "points 3 is more than out_of 2"),
    ("ada,00_tiny,think-1,1,2,\nbea,00_tiny,think-1,1,3,", "is out of 2 on an earlier line, 3 here"),
    ("ada,00_tiny,think-1,1,2,\nada,00_tiny,think-1,2,2,", "also scored on line 2"),
    ("ada,00_tiny,think-1,lots,2,", "points 'lots' is not a number"),
])
def test_bad_rubric_scores_say_what_and_where(tmp_path, rows, message):
    with pytest.raises(SheetError, match=message):
        read_rubric_scores(sheet(tmp_path, f"student,lesson,question,points,out_of,comment\n{rows}\n"))
