"""A played term (issue 52): release → collect → grade → review → give back → export, on a class of
the tiny lab (conftest.py; no model, graded in-process) with a roster, a late submission, an
extension, an override, a planted copy, reflections scored with a rubric, a student who handed in
nothing and a folder on no roster line.

The class is graded three times (a few seconds each): before the term's sheets (roster only),
with them all, and a regrade of one student after a second override.
"""
from __future__ import annotations

import csv
import json
import os
from datetime import datetime, timezone
from pathlib import Path

import nbformat
import pytest

import course.collect
from tests.labs.conftest import SOLVED, TINY_LAB
from tests.labs.test_grading import grade_here, tiny_lesson

# ada's own long answers; cai's are ada's with every name changed (the planted copy); dan wrote his own
ADA = {
    "add": "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    numbers = [a, b]\n    total = 0\n"
           "    for number in numbers:\n        if not isinstance(number, (int, float)):\n"
           "            raise TypeError('add takes numbers, got ' + repr(number))\n        total = total + number\n"
           "    return total",
    "shout": "def shout(text):\n    \"\"\"Return text in capitals with an exclamation mark.\"\"\"\n    letters = []\n"
             "    for letter in text:\n        letters.append(letter.upper())\n    loud = ''.join(letters)\n"
             "    return loud + '!'",
}
CAI = {key: code.replace("numbers", "values").replace("number", "value").replace("total", "acc")
       .replace("letters", "chars").replace("letter", "ch").replace("loud", "big") for key, code in ADA.items()}
DAN = {"add": "def add(a, b):\n    return sum((a, b))", "shout": "def shout(text):\n    return f'{text.upper()}!'"}
WRONG_ADD = "def add(a, b):\n    return a + b if a >= 0 else b - a"   # fails check-add-negative only

DEADLINE = "2026-10-01T23:59+00:00"
SAVED = {  # when each student last saved their notebook (UTC)
    "ada": "2026-10-01T12:00:00", "bea": "2026-10-03T10:00:00", "cai": "2026-10-01T20:00:00",
    "dan": "2026-10-03T10:00:00", "zed": "2026-10-01T08:00:00"}
ROSTER = ("student_id,name,email,folder\n"
          "s001,Ada Lovelace,ada@example.edu,ada\ns002,Bea Kim,bea@example.edu,bea\n"
          "s003,Cai Lun,cai@example.edu,cai\ns004,Dan Ito,dan@example.edu,dan\n"
          "s005,Eve Moss,eve@example.edu,eve\n")
DEADLINES = f"lab,deadline,student,extension\n{TINY_LAB},{DEADLINE},,\n{TINY_LAB},,dan,3\n"
RUBRIC = ("student,lesson,question,points,out_of,comment,rubric\n"
          "ada,00_tiny,think-1,2,2,clear and complete,names the reason\n"
          "bea,00_tiny,think-1,1,2,say why adding matters,restates the question\n")
OVERRIDES = (f"student,lab,check,verdict,points,reason\n"
             f"bea,{TINY_LAB},check-add-negative,pass,,negative numbers were not in the brief this term\n")


def read_csv(path: Path) -> list[dict]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


@pytest.fixture(scope="module")
def term(tiny, tmp_path_factory):
    base = tmp_path_factory.mktemp("term")
    homes = base / "homes"
    answers = {"ada": ADA, "bea": {**SOLVED, "add": WRONG_ADD}, "cai": CAI, "dan": DAN, "zed": SOLVED}
    for student, theirs in answers.items():  # each home as JupyterHub leaves it: the release's folders
        path = homes / student / "course" / "labs" / f"{TINY_LAB}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(tiny.submission(theirs), path)
        saved = datetime.fromisoformat(SAVED[student]).replace(tzinfo=timezone.utc).timestamp()
        os.utime(path, (saved, saved))
    lessons = base / "lessons"
    lessons.mkdir()
    nbformat.write(tiny_lesson(), lessons / "00_tiny.ipynb")
    for student, answer in (("ada", "To count what we have."), ("bea", "Because.")):
        lesson = tiny_lesson()
        lesson.cells[4].source = answer
        nbformat.write(lesson, homes / student / "course" / "00_tiny.ipynb")
    sheets = {name: base / name for name in ("roster.csv", "deadlines.csv", "overrides.csv", "rubric.csv")}
    for (name, path), text in zip(sheets.items(), (ROSTER, DEADLINES, OVERRIDES, RUBRIC)):
        path.write_text(text, encoding="utf-8")
    subs = base / "submissions"
    assert course.collect.main([str(homes), "--out", str(subs), "--labs", str(tiny.labs_dir),
                                "--lessons", str(lessons)]) == 0
    common = [subs, "--labs", tiny.labs_dir, "--lessons", lessons, "--timeout", "30", "--jobs", "1",
              "--roster", sheets["roster.csv"]]
    grade_here(*common, "--output", base / "before")
    grade_here(*common, "--output", base / "after", "--deadlines", sheets["deadlines.csv"],
               "--late-policy", "10%/day,max=50%", "--overrides", sheets["overrides.csv"],
               "--rubric-scores", sheets["rubric.csv"],
               "--similarity", "--export", "canvas", "--export", "moodle", "--give-back", homes)
    return base, homes, subs, sheets


def gradebook(folder: Path) -> tuple[list[dict], str]:
    return read_csv(folder / "gradebook.csv"), (folder / "gradebook.md").read_text(encoding="utf-8")


def test_collect_copies_the_notebooks_read_only_with_their_times(term):
    _, homes, subs, _ = term
    manifest = json.loads((subs / "collect-manifest.json").read_text(encoding="utf-8"))
    files = {f["path"]: f for f in manifest["files"]}
    assert sorted(files) == sorted([f"{s}/course/labs/{TINY_LAB}.ipynb" for s in SAVED]
                                   + ["ada/course/00_tiny.ipynb", "bea/course/00_tiny.ipynb"])
    bea = files[f"bea/course/labs/{TINY_LAB}.ipynb"]
    assert bea["mtime"] == SAVED["bea"] + "+00:00"
    assert bea["size"] == (homes / "bea" / "course" / "labs" / f"{TINY_LAB}.ipynb").stat().st_size
    copy = subs / "bea" / "course" / "labs" / f"{TINY_LAB}.ipynb"
    assert copy.stat().st_mode & 0o777 == 0o444


def test_the_roster_gives_the_absent_a_row_and_reports_strangers(term):
    base, _, _, _ = term
    rows, md = gradebook(base / "before")
    assert "| eve | Eve Moss (s005) | not handed in | 0 / 3 |" in md
    assert "## Not on the roster" in md and "`zed`" in md
    assert "| zed | *not on the roster* | 3 / 3 | 3 / 3 |" in md
    assert [r["status"] for r in rows if r["student"] == "eve"] == ["not handed in"]
    assert "Late work" not in md and "Overrides" not in md


def test_late_policy_shows_raw_penalty_final_and_why(term):
    base, _, _, _ = term
    before, _ = gradebook(base / "before")
    rows, md = gradebook(base / "after")
    # bea: 2 of 3 before; the override makes it 3; 2 days late at 10%/day: -0.6
    assert sum(float(r["earned"]) for r in before if r["student"] == "bea" and r["lab"] == TINY_LAB) == 2
    assert f"| bea | {TINY_LAB} | 3 / 3 | −0.6 | 2.4 / 3 |" in md
    assert "2 days after the deadline 2026-10-01T23:59+00:00: 10%/day,max=50%: 20% of the raw score" in md
    assert "| bea | Bea Kim (s002) | 2.4 / 3 late | 1 / 2 | 3.4 / 5 |" in md  # with her reflection's 1 / 2
    late = [r for r in rows if r["student"] == "bea" and r["check"] == "late penalty"]
    assert [(r["status"], r["earned"]) for r in late] == [("late", "-0.6")]
    # dan handed in as late as bea, within his 3-day extension: not late
    assert "| dan | Dan Ito (s004) | 3 / 3 | 0 / 2 | 3 / 5 |" in md


def test_overrides_change_the_check_and_are_listed_with_the_reason(term):
    base, _, _, _ = term
    rows, md = gradebook(base / "after")
    bea = {r["check"]: r for r in rows if r["student"] == "bea"}
    assert (bea["check-add-negative"]["status"], bea["check-add-negative"]["earned"]) == ("pass", "1")
    assert bea["check-add-negative"]["detail"].startswith("overridden by the instructor: negative numbers")
    assert (f"| bea | {TINY_LAB} | check-add-negative | fail, 0 / 1 | pass, 1 / 1 | negative numbers were not "
            f"in the brief this term |") in md


def test_the_feedback_says_the_penalty_and_the_override(term):
    base, _, _, _ = term
    text = (base / "after" / "feedback" / "bea.md").read_text(encoding="utf-8")
    assert "Your total: **3.4 / 5**" in text
    assert "think-1: **score: 1 / 2** (rubric: restates the question): say why adding matters" in text
    assert "late: handed in 2026-10-03T10:00+00:00, 2 days after the deadline" in text
    assert "override of check-add-negative: fail, 0 / 1 → pass, 1 / 1: negative numbers" in text
    graded = nbformat.read(base / "after" / "graded-notebooks" / "bea" / f"{TINY_LAB}.ipynb", as_version=4)
    assert "Late:" in graded.cells[0].source and "override of check-add-negative" in graded.cells[0].source


def test_the_planted_copy_is_the_one_similar_pair(term):
    base, _, _, _ = term
    report = (base / "after" / "similarity.md").read_text(encoding="utf-8")
    assert report.count("\n## ") == 1 and f"## {TINY_LAB}: `ada` and `cai`" in report
    assert "for number in numbers:" in report  # a shared line, as ada wrote it
    assert "raise NotImplementedError" not in report  # the stubs are not evidence


def test_give_back_writes_next_to_the_students_work(term):
    _, homes, _, _ = term
    given = homes / "bea" / "course-feedback"
    assert sorted(p.name for p in given.iterdir()) == [f"{TINY_LAB}.ipynb", "feedback.md"]
    assert "3.4 / 5" in (given / "feedback.md").read_text(encoding="utf-8")
    assert (homes / "bea" / "course" / "labs" / f"{TINY_LAB}.ipynb").is_file()  # their work untouched
    assert not (homes / "eve").exists()  # no home: nothing created for eve


def test_exports_have_a_row_per_roster_student_and_a_column_per_lab(term):
    base, _, _, _ = term
    canvas = read_csv(base / "after" / "export-canvas.csv")
    assert list(canvas[0]) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", TINY_LAB,
                               "Reflections", "Total"]
    assert {r["SIS User ID"]: (r[TINY_LAB], r["Reflections"], r["Total"]) for r in canvas} == {
        "s001": ("3", "2", "5"), "s002": ("2.4", "1", "3.4"), "s003": ("3", "0", "3"), "s004": ("3", "0", "3"),
        "s005": ("0", "0", "0")}
    moodle = read_csv(base / "after" / "export-moodle.csv")
    assert list(moodle[0]) == ["First name", "ID number", "Email address", TINY_LAB, "Reflections", "Total"]
    assert [r["Email address"] for r in moodle] == [f"{s}@example.edu" for s in ("ada", "bea", "cai", "dan", "eve")]


def test_regrading_one_student_changes_only_their_rows(term, tiny):
    base, _, subs, sheets = term
    after = base / "after"
    rows_before, _ = gradebook(after)
    more = sheets["overrides.csv"].read_text(encoding="utf-8") + (
        f"ada,{TINY_LAB},check-shout,,0,shouting was not her own work\n")
    (base / "overrides2.csv").write_text(more, encoding="utf-8")
    grade_here(subs, "--labs", tiny.labs_dir, "--lessons", base / "lessons", "--timeout", "30", "--jobs", "1",
               "--output", after, "--deadlines", sheets["deadlines.csv"], "--late-policy", "10%/day,max=50%",
               "--overrides", base / "overrides2.csv", "--rubric-scores", sheets["rubric.csv"], "--only", "ada")
    rows_after, md = gradebook(after)
    assert [r for r in rows_after if r["student"] != "ada"] == [r for r in rows_before if r["student"] != "ada"]
    ada = {r["check"]: r["earned"] for r in rows_after if r["student"] == "ada"}
    assert ada == {"check-add-pair": "1", "check-add-negative": "1", "check-shout": "0", "think-1": "2", "think-2": ""}
    assert "| eve | Eve Moss (s005) | not handed in | 0 / 2 | 0 / 5 |" in md  # the roster and rubric kept
    assert (after / "graded-notebooks" / "bea" / f"{TINY_LAB}.ipynb").is_file()  # others' copies kept
