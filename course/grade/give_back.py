"""Giving the feedback back (`--give-back HOMES`, or `python -m course.grade give-back OUT HOMES`):
each student's feedback file and graded notebooks, copied from the gradebook's folder into a new
folder `course-feedback/` in their home (`course-feedback-2/` if that name is taken, and so
on): next to their work, never over it.

A home is the student's: they may have put links in it. Every step goes through folder
descriptors opened without following links, and every file is created new (O_EXCL), so nothing
outside the home, and nothing already in it, is ever written."""
from __future__ import annotations

import os
from pathlib import Path

from course.grade.feedback import FEEDBACK_DIR, feedback_file
from course.grade.nbval_engine import GRADED_DIR
from course.grade.student_text import display_name

FOLDER = "course-feedback"
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW


def _new_folder(home_fd: int) -> str:
    for n in range(1, 1000):
        name = FOLDER if n == 1 else f"{FOLDER}-{n}"
        try:
            os.mkdir(name, 0o755, dir_fd=home_fd)
            return name
        except FileExistsError:
            continue
    raise OSError(f"{FOLDER}-1 to -999 all exist")


def _write(folder_fd: int, name: str, data: bytes) -> None:
    fd = os.open(name, _NEW, 0o644, dir_fd=folder_fd)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def what_to_give(out: Path, student: str) -> list[tuple[str, bytes]]:
    """(file name, bytes) of a student's feedback file and graded notebooks in `out`."""
    files = []
    feedback = out / FEEDBACK_DIR / feedback_file(student)
    if feedback.is_file():
        files.append(("feedback.md", feedback.read_bytes()))
    graded = out / GRADED_DIR / student
    if graded.is_dir() and not graded.is_symlink():
        files += [(p.name, p.read_bytes()) for p in sorted(graded.glob("*.ipynb")) if p.is_file()]
    return files


def give_back(out: Path, homes: Path, students: list[str]) -> list[str]:
    """Copy each student's feedback into their home in `homes`; a line per student saying where
    it went, or why it did not."""
    report = []
    homes_fd = os.open(homes, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for student in students:
            shown = display_name(student)
            files = what_to_give(out, student)
            if not files:
                report.append(f"{shown}: nothing to give back")
                continue
            try:
                home_fd = os.open(student, _DIR, dir_fd=homes_fd)
            except FileNotFoundError:
                report.append(f"{shown}: no folder {shown} in {homes}: not given back")
                continue
            except OSError as exc:
                report.append(f"{shown}: {shown} in {homes} is a link or not a folder ({exc.strerror}): "
                              f"not given back")
                continue
            try:
                name = _new_folder(home_fd)
                folder_fd = os.open(name, _DIR, dir_fd=home_fd)
                try:
                    for file_name, data in files:
                        _write(folder_fd, file_name, data)
                finally:
                    os.close(folder_fd)
                report.append(f"{shown}: {len(files)} files in {shown}/{name}/")
            except OSError as exc:
                report.append(f"{shown}: could not give back ({exc}): nothing of theirs was changed")
            finally:
                os.close(home_fd)
    finally:
        os.close(homes_fd)
    return report
