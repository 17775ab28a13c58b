"""Hostile submissions aimed at collecting the class, not at the checks (issue 47, items 11, 12).

One class of the tiny lab, graded once as every lab is graded (its exercises in a worker;
`--unconfined`, since none of these attacks the sandbox), holds an honest student, alice, and
entries that each tried to stop the class's grading or to take someone's grade: a notebook
linked to alice's, a gradebook planted in a folder, a file beside alice's folder, FIFOs named
like a lab, a file name that is not UTF-8, lone surrogates in a cell and in the metadata,
metadata of the wrong shapes, and 1,500-deep folder trees in a submission and in the scratch.
The gradebook is written, alice keeps full marks, and every entry is a row with its reason.
"""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import nbformat
import pytest

from course.file_trees import remove_tree
import course.grade
from course.grade import collect
from tests.labs.conftest import SOLVED, TINY_LAB
from tests.labs.test_grading import grade_here, hand_in, worker_class

DEPTH = 1500  # deeper than Python's recursion limit


def deep_tree(folder: Path, depth: int = DEPTH) -> None:
    """`folder/d/d/.../d`, `depth` levels, made through directory descriptors (a path that long
    is past what one system call takes)."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


DIGS_IN_THE_SCRATCH = SOLVED["add"] + (
    "\n\nimport os\n"
    "fd = os.open('.', os.O_RDONLY)\n"
    f"for _ in range({DEPTH}):\n"
    "    try:\n"
    "        os.mkdir('d', dir_fd=fd)\n"
    "    except FileExistsError:\n"
    "        pass\n"
    "    inner = os.open('d', os.O_RDONLY, dir_fd=fd)\n"
    "    os.close(fd)\n"
    "    fd = inner\n"
    "os.close(fd)\n")


def with_lone_surrogate(nb: nbformat.NotebookNode, where: str) -> str:
    """The notebook's JSON with a lone surrogate (valid JSON, not valid Unicode) in a cell or in
    the metadata, as an editor or a script can write it."""
    marker = "SURROGATE-HERE"
    if where == "cell":
        cell = next(c for c in nb.cells if "exercise" in c.metadata.get("tags", []))
        cell.source += f"\n# {marker}"
    else:
        nb.metadata["course"]["language"] = marker
    return json.dumps(nb, indent=1).replace(marker, "\\ud800")


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile_collect")
    labs, subs = worker_class(base)
    solved = hand_in(labs, SOLVED)

    def write(relative: str, nb=solved) -> Path:
        path = subs / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        return path

    write(f"alice/{TINY_LAB}.ipynb")
    write("alice.ipynb", hand_in(labs, {}))  # beside alice's folder: the stub
    (subs / "mallory").mkdir()
    (subs / "mallory" / f"{TINY_LAB}.ipynb").symlink_to(Path("..") / "alice" / f"{TINY_LAB}.ipynb")
    (subs / "trudy.ipynb").symlink_to(Path("alice") / f"{TINY_LAB}.ipynb")
    (subs / "oscar").symlink_to("alice", target_is_directory=True)
    write(f"paula/{TINY_LAB}.ipynb")
    (subs / "paula" / "gradebook.json").write_text("{}", encoding="utf-8")
    (subs / "fifi").mkdir()
    os.mkfifo(subs / "fifi" / f"{TINY_LAB}.ipynb")
    os.mkfifo(subs / "fred.ipynb")
    write(os.fsdecode(b"b\xffd.ipynb"))
    (subs / "sue.ipynb").write_text(with_lone_surrogate(hand_in(labs, SOLVED), "cell"), encoding="utf-8")
    (subs / "meta.ipynb").write_text(with_lone_surrogate(hand_in(labs, SOLVED), "metadata"),
                                     encoding="utf-8")
    for name, metadata in (("listy", ["x"]), ("dicty", {"lab": {"not": "an id"}})):
        nb = hand_in(labs, SOLVED)
        nb.metadata["course"] = metadata
        write(f"{name}.ipynb", nb)
    write(f"deep/{TINY_LAB}.ipynb")
    deep_tree(subs / "deep" / "tree")
    write("digger.ipynb", hand_in(labs, {**SOLVED, "add": DIGS_IN_THE_SCRATCH}))
    out = base / "out"
    try:
        grade_here(subs, "--labs", labs, "--timeout", "30", "--jobs", "1", "--unconfined", "--output", out)
    finally:  # pytest's own clean-up of old temporary folders recurses (and would raise)
        remove_tree(subs / "deep" / "tree")
    rows = list(csv.DictReader((out / "gradebook.csv").open(encoding="utf-8")))
    return rows, (out / "gradebook.md").read_text(encoding="utf-8"), subs


def earned(rows, student) -> int:
    return sum(int(r["earned"] or 0) for r in rows if r["student"] == student)


def reasons(rows, student) -> list[str]:
    return [r["detail"] for r in rows if r["student"] == student and r["status"] == "not graded"]


def test_the_honest_student_keeps_full_marks(hostile_class):
    rows, _, _ = hostile_class
    assert earned(rows, "alice") == 3
    assert {r["notebook"] for r in rows if r["student"] == "alice"} == {f"alice/{TINY_LAB}.ipynb"}


def test_a_linked_notebook_is_refused_not_graded_as_the_linkers_work(hostile_class):
    rows, _, _ = hostile_class
    for student in ("mallory", "trudy", "oscar"):
        assert earned(rows, student) == 0, student
        why = reasons(rows, student)
        assert len(why) == 1 and "a link" in why[0] and "links are not followed" in why[0], (student, why)


def test_a_planted_gradebook_does_not_hide_a_student(hostile_class):
    rows, _, _ = hostile_class
    assert earned(rows, "paula") == 3


def test_a_file_beside_a_students_folder_is_reported_not_silently_preferred(hostile_class):
    rows, summary, _ = hostile_class
    assert earned(rows, "alice") == 3  # the stub beside the folder does not replace alice's work
    theirs = [r for r in rows if r["notebook"] == "alice.ipynb"]
    assert theirs and {r["student"] for r in theirs} == {"alice.ipynb"}
    assert "alice.ipynb and the folder alice/ both hand in work for alice" in summary


def test_a_fifo_named_like_a_lab_is_not_graded_and_does_not_block(hostile_class):
    rows, _, _ = hostile_class
    for student in ("fifi", "fred"):
        why = reasons(rows, student)
        assert len(why) == 1 and "not a regular file" in why[0], (student, why)


def test_a_file_name_that_is_not_utf8_is_that_students_row(hostile_class):
    rows, summary, _ = hostile_class
    why = reasons(rows, "b\\xffd")
    assert len(why) == 1 and "not valid UTF-8" in why[0], why
    assert "b\\\\xffd" in summary  # its name shown with the byte spelt out (and the \ escaped)


@pytest.mark.parametrize("student", ["sue", "meta"])
def test_a_lone_surrogate_is_that_students_row(hostile_class, student):
    rows, _, _ = hostile_class
    why = reasons(rows, student)
    assert len(why) == 1 and "not valid Unicode" in why[0] and "\\ud800" in why[0], why


@pytest.mark.parametrize("student,what", [("listy", "metadata.course"), ("dicty", "metadata.course.lab")])
def test_metadata_of_the_wrong_shape_is_that_students_row(hostile_class, student, what):
    rows, _, _ = hostile_class
    why = reasons(rows, student)
    assert len(why) == 1 and what in why[0], why


def test_deep_folder_trees_in_a_submission_or_the_scratch_stop_nothing(hostile_class):
    rows, _, _ = hostile_class
    assert earned(rows, "deep") == 3
    assert earned(rows, "digger") == 3


def test_every_entry_of_the_class_is_a_row(hostile_class):
    rows, _, subs = hostile_class
    students = {r["student"] for r in rows}
    assert students == {"alice", "alice.ipynb", "mallory", "trudy", "oscar", "paula", "fifi", "fred",
                        "b\\xffd", "sue", "meta", "listy", "dicty", "deep", "digger"}
    assert {s.student for s in collect(subs)} <= students


def test_an_earlier_output_folder_is_still_skipped_and_named(tiny, tmp_path):
    """What a planted gradebook imitated: an earlier run's output folder inside the class, which
    holds no notebook of its own, is skipped, and the gradebook says so."""
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(tiny.submission(SOLVED), subs / "amir.ipynb")
    (subs / "old-shard" / "graded-notebooks" / "amir").mkdir(parents=True)
    (subs / "old-shard" / "gradebook.csv").write_text("student\n", encoding="utf-8")
    nbformat.write(tiny.submission(SOLVED), subs / "old-shard" / "graded-notebooks" / "amir" / f"{TINY_LAB}.ipynb")
    (subs / "old-shard" / "graded-notebooks" / ".course-graded-notebooks").write_text("", encoding="utf-8")
    grade_here(subs, "--labs", tiny.labs_dir, "--timeout", "30", "--jobs", "1", "--output", tmp_path / "out")
    rows = list(csv.DictReader((tmp_path / "out" / "gradebook.csv").open(encoding="utf-8")))
    assert {r["student"] for r in rows} == {"amir"}
    assert "old-shard/" in (tmp_path / "out" / "gradebook.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["feedback", "graded-notebooks"])
def test_a_folder_named_like_the_graders_output_is_refused_before_grading(tiny, tmp_path, name, capsys):
    """A student's folder named like one the grader writes into its output folder (the class
    folder, by default) cannot be overwritten or half-written: a clear error before grading,
    which --output elsewhere avoids."""
    subs = tmp_path / "subs"
    (subs / name).mkdir(parents=True)
    nbformat.write(tiny.submission(SOLVED), subs / name / f"{TINY_LAB}.ipynb")
    with pytest.raises(SystemExit) as stopped:
        course.grade.main([str(subs), "--labs", str(tiny.labs_dir)])
    assert stopped.value.code == 2 and "grade with --output DIR" in capsys.readouterr().err
    assert not (subs / "gradebook.csv").exists()
