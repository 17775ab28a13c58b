"""What a student controls stays inert in the term's new outputs (issue 52): a folder on no roster
line, the code in the similarity report, and a roster name in the platform exports (the
instructor's sheet, but a spreadsheet reads it all the same). Written from hand-made records:
no grading needed."""
from __future__ import annotations

import csv
import json
import re

from course.grade.export import write_export
from course.grade.gradebook import write_gradebook
from course.grade.roster import Person
from course.grade.similarity import write_report
from course.grade.submissions import Submission

LAB = "00_tiny_lab"
HOSTILE = "<img src=x onerror=alert(1)>|# [x](javascript:evil)"  # a folder name: no slash


def row(student, check, earned):
    return {"student": student, "notebook": f"{student}/{LAB}.ipynb", "lab": LAB, "check": check,
            "status": "pass" if earned else "fail", "points": 1, "earned": earned, "detail": ""}


def test_a_stranger_folder_and_a_late_lab_are_escaped_in_the_gradebook(tmp_path):
    stranger = Submission(HOSTILE, f"{HOSTILE}/{LAB}.ipynb", lab=LAB, rows=[row(HOSTILE, "check-a", 1)])
    late = Submission("ada", f"ada/{LAB}.ipynb", lab=LAB, rows=[row("ada", "check-a", 1)], penalty=0.5,
                      late={"handed_in": "x", "deadline": "y", "days": 1, "why": "handed in *late*"})
    roster = [Person("s1", "=HYPERLINK(\"http://evil\")", "ada@example.edu", "ada")]
    write_gradebook([stranger, late], {LAB: {"points": 1, "checks": ["check-a"], "sha256": ""}}, tmp_path,
                    roster=roster)
    md = (tmp_path / "gradebook.md").read_text(encoding="utf-8")
    outside_code = re.sub(r"`[^`\n]*`", "", md)  # a code span shows its text as it is
    assert not re.search(r"(?<!\\)<img", outside_code) and "\\<img src=x onerror=alert(1)\\>\\|\\# \\[x\\]" in md
    assert "## Not on the roster" in md and "handed in \\*late\\*" in md
    assert "| ada | =HYPERLINK(\"http://evil\") (s1) | 0.5 / 1 late | 0.5 / 1 |" in md  # inert in Markdown
    data = json.loads((tmp_path / "gradebook.json").read_text(encoding="utf-8"))
    path, left_out = write_export(data, "canvas", tmp_path)
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert rows[0]["Student"] == "'=HYPERLINK(\"http://evil\")" and rows[0][LAB] == "0.5"
    assert left_out == [HOSTILE]


def test_code_in_the_similarity_report_cannot_close_its_block(tmp_path):
    code = ["x = 1", "```", "# Heading", "<script>alert(1)</script>", "````"]
    write_report([{"lab": LAB, "a": "ada`", "b": HOSTILE, "score": 0.9, "a_share": 0.9, "b_share": 0.8,
                   "lines": code}], 0.6, tmp_path)
    text = (tmp_path / "similarity.md").read_text(encoding="utf-8")
    fence = "`````"  # longer than any backtick run in the code
    body = text.split(fence + "\n")[1].rstrip("\n")  # between the opening fence and the closing one
    assert body.split("\n") == code
    heading = text.split("\n## ")[1].split("\n")[0]
    assert text.count("\n## ") == 1 and heading == f"{LAB}: `` ada` `` and `{HOSTILE}`, 90% alike"  # code spans
