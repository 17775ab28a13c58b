"""Giving feedback back into students' homes (issue 52): next to their work, never over it, and
never through a link they planted."""
from __future__ import annotations

import os

from course.grade.give_back import give_back


def graded_folder(tmp_path, students):
    out = tmp_path / "graded"
    for student in students:
        (out / "feedback").mkdir(parents=True, exist_ok=True)
        (out / "feedback" / f"{student}.md").write_text(f"# Feedback for {student}\n", encoding="utf-8")
        (out / "graded-notebooks" / student).mkdir(parents=True)
        (out / "graded-notebooks" / student / "00_tiny_lab.ipynb").write_text("{}", encoding="utf-8")
    return out


def test_a_planted_link_is_never_written_through(tmp_path):
    out = graded_folder(tmp_path, ["mal", "ana"])
    homes, elsewhere = tmp_path / "homes", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (homes / "mal").mkdir(parents=True)
    os.symlink(elsewhere, homes / "mal" / "course-feedback")  # the name give-back would use
    os.symlink(elsewhere, homes / "ana")                       # a home that is a link
    report = give_back(out, homes, ["mal", "ana"])
    assert list(elsewhere.iterdir()) == []
    assert sorted(p.name for p in (homes / "mal" / "course-feedback-2").iterdir()) == ["00_tiny_lab.ipynb",
                                                                                       "feedback.md"]
    assert report[0].startswith("mal: 2 files in mal/course-feedback-2/")
    assert "is a link or not a folder" in report[1]


def test_giving_back_twice_keeps_the_first_and_the_students_files(tmp_path):
    out = graded_folder(tmp_path, ["bea"])
    homes = tmp_path / "homes"
    (homes / "bea").mkdir(parents=True)
    (homes / "bea" / "feedback.md").write_text("bea's own notes", encoding="utf-8")
    give_back(out, homes, ["bea"])
    give_back(out, homes, ["bea"])
    assert sorted(p.name for p in (homes / "bea").iterdir()) == ["course-feedback", "course-feedback-2", "feedback.md"]
    assert (homes / "bea" / "feedback.md").read_text(encoding="utf-8") == "bea's own notes"
