"""Grading a class: restored checks, timeouts, broken files, all in one gradebook.

The played class grades lab 01 (with the teaching model); the tests of re-runs, --jobs,
--shard/merge and lab matching use the tiny lab of conftest.py, which needs no model.
"""
import csv
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import course.grade
import solutions.agent_loop
from course.grade import collect, shard_of
from course.labs import (LabError, cell_key, cell_kind, find_released_labs, graded_exercises,
                         load_lab, match_lab, nbval_check_source, nbval_graded, not_attempted,
                         read_notebook)
from course.paths import REPO_ROOT
from tests.labs.conftest import SOLVED, TINY_LAB

ROOT = REPO_ROOT
LAB = ROOT / "labs" / "01_agent_loop_lab.ipynb"
SOLUTION_SOURCE = inspect.getsource(solutions.agent_loop)
KERNEL_WARNINGS = ("without encryption", "Kernel is running over TCP", "WARNING")


def submission(answers: dict, edit_checks=None) -> nbformat.NotebookNode:
    """A student's copy of lab 01: exercise cells replaced by `answers[key]`."""
    nb = nbformat.read(LAB, as_version=4)
    for cell in nb.cells:
        if cell_kind(cell) == "exercise" and cell_key(cell) in answers:
            cell.source = answers[cell_key(cell)]
        if cell_kind(cell) == "check" and edit_checks:
            cell.source = edit_checks(cell.source)
    return nb


def grade(*args, cwd=None):
    done = subprocess.run([sys.executable, "-m", "course.grade", *map(str, args)],
                          capture_output=True, text=True, timeout=900, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done


def grade_here(*args) -> None:
    """course.grade in this process (no interpreter to start): for the tiny lab's runs."""
    assert course.grade.main([str(a) for a in args]) == 0


def worker_tiny_lab(folder: Path) -> Path:
    """A folder of released labs holding the tiny lab graded as every released lab is: its
    exercises in a worker (`"worker": true`). The hostile classes of tests/labs/ use it."""
    from tests.labs.conftest import tiny_lab_notebook

    folder.mkdir(parents=True, exist_ok=True)
    nb = tiny_lab_notebook()
    nb.metadata["course"]["worker"] = True
    nbformat.write(nb, folder / f"{TINY_LAB}.ipynb")
    return folder


def worker_class(base: Path) -> tuple[Path, Path]:
    """(labs, submissions): the worker tiny lab in `base/labs` and an empty class folder beside it."""
    (base / "submissions").mkdir(parents=True)
    return worker_tiny_lab(base / "labs"), base / "submissions"


def hand_in(labs: Path, answers: dict) -> nbformat.NotebookNode:
    """A student's copy of the tiny lab in `labs`, its exercise cells replaced by `answers[key]`."""
    nb = nbformat.read(labs / f"{TINY_LAB}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell_kind(cell) == "exercise" and cell_key(cell) in answers:
            cell.source = answers[cell_key(cell)]
    return nb


def read_gradebook(folder: Path):
    rows = list(csv.DictReader((folder / "gradebook.csv").open(encoding="utf-8")))
    return rows, (folder / "gradebook.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    subs = tmp_path_factory.mktemp("submissions")
    nbformat.write(submission({"validate_messages": SOLUTION_SOURCE, "run_agent": SOLUTION_SOURCE,
                               "self_test": SOLUTION_SOURCE}), subs / "alice.ipynb")
    (subs / "bob").mkdir()  # right validator, stub loop, and every check weakened to `pass`
    nbformat.write(submission({"validate_messages": SOLUTION_SOURCE}, edit_checks=lambda s: "pass"),
                   subs / "bob" / "lab01.ipynb")
    loop = ("def run_agent(client, messages, tools, execute_tool, max_iterations=10, model=None):\n"
            "    while True:\n        pass")
    nbformat.write(submission({"validate_messages": SOLUTION_SOURCE, "run_agent": loop}), subs / "carol.ipynb")
    (subs / "dave.ipynb").write_text('{"cells": [', encoding="utf-8")  # corrupt
    other = submission({})
    other.metadata["course"]["lab"] = "99_elsewhere_lab"
    nbformat.write(other, subs / "erin.ipynb")
    (subs / "frank").mkdir()  # empty folder
    cheat = "from solutions.agent_loop import run_agent, validate_messages"
    nbformat.write(submission({"validate_messages": cheat, "run_agent": cheat}), subs / "gina.ipynb")
    nbformat.write(submission({}), subs / "henry.ipynb")  # handed back untouched
    out = tmp_path_factory.mktemp("out")
    done = grade(subs, "--timeout", "10", "--output", out)  # the default engine: nbval
    rows, summary = read_gradebook(out)
    return done, rows, summary, out, subs


# Lab 01's checks: all of them, and the validator's (what a validate_messages-only answer earns).
N = len(load_lab(LAB).checks())
V = sum(cell_key(c).startswith("check-validate") for _, c in load_lab(LAB).checks())


def score(rows, student):
    mine = [r for r in rows if r["student"] == student]
    return sum(float(r["earned"]) for r in mine), sum(float(r["points"] or 0) for r in mine)


def test_correct_submission_scores_full_marks(gradebook):
    _, rows, _, _, _ = gradebook
    assert score(rows, "alice") == (N, N)


def test_weakened_checks_are_restored(gradebook):
    _, rows, _, _, _ = gradebook
    bob = {r["check"]: r["status"] for r in rows if r["student"] == "bob"}
    assert score(rows, "bob") == (V, N)  # the validator checks; the loop and self-test checks came back and fail
    assert bob["check-agent-vancouver"] == "fail"


def test_an_infinite_loop_costs_its_checks_not_the_run(gradebook):
    _, rows, _, _, _ = gradebook
    carol = {r["check"]: r["status"] for r in rows if r["student"] == "carol"}
    assert carol["check-agent-vancouver"] == "timeout"
    assert score(rows, "carol") == (V, N)


def test_broken_input_is_reported_per_student(gradebook):
    done, rows, summary, _, _ = gradebook
    reasons = {r["student"]: r["detail"] for r in rows if r["status"] == "not graded"}
    assert set(reasons) == {"dave", "erin", "frank"}
    assert "broken JSON" in reasons["dave"]
    assert "99_elsewhere_lab" in reasons["erin"] and "not a notebook of any released lab" in reasons["erin"]
    assert "no .ipynb" in reasons["frank"]
    assert "[8/8]" in done.stdout and "NOT GRADED" in done.stdout
    assert f"| alice | {N} / {N} | {N} / {N} |" in summary


def test_importing_the_reference_solution_earns_nothing(gradebook):
    _, rows, summary, _, _ = gradebook
    assert score(rows, "gina") == (0, N)
    assert "imports the reference solutions" in summary


def test_an_untouched_lab_is_not_attempted(gradebook):
    _, rows, summary, _, _ = gradebook
    assert {r["status"] for r in rows if r["student"] == "henry"} == {"not attempted"}
    assert f"| henry | not attempted | 0 / {N} |" in summary


def test_the_summary_has_totals_reasons_and_whole_points(gradebook):
    _, rows, summary, _, _ = gradebook
    assert {r["points"] for r in rows if r["points"]} == {"1"} and "1.0" not in summary
    assert "| student | 01_agent_loop_lab | total |" in summary
    assert f"| bob | {V} / {N} | {V} / {N} |" in summary and f"| dave | — | 0 / {N} |" in summary
    bob = summary.split("### bob")[1].split("###")[0]
    assert ("✗ check-agent-vancouver (fail): run_agent must answer the Vancouver question in 2 API calls "
            "and return the history, without changing the caller's list — NotImplementedError: write run_agent") in bob
    carol = summary.split("### carol")[1].split("###")[0]
    assert "✗ check-agent-vancouver (timeout): Timeout: your code did not return within 10 s" in carol


def test_no_kernel_warnings_in_the_output(gradebook):
    done, _, _, _, _ = gradebook
    assert not [w for w in KERNEL_WARNINGS if w in done.stdout + done.stderr], done.stderr


def test_the_removed_kernel_engine_is_a_clear_error_that_grades_nothing(tmp_path):
    (tmp_path / "subs").mkdir()
    done = subprocess.run([sys.executable, "-m", "course.grade", str(tmp_path / "subs"), "--engine", "kernel",
                           "--output", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 2 and "--engine kernel is gone: grading has one path" in done.stderr
    assert not (tmp_path / "out").exists()


def test_an_instructor_can_run_nbval_by_hand_on_a_graded_copy(gradebook, tmp_path):
    _, rows, _, out, _ = gradebook
    copy = out / "graded-notebooks" / "bob" / "01_agent_loop_lab.ipynb"
    assert copy.exists() and (out / "graded-notebooks" / ".course-graded-notebooks").exists()
    junit = tmp_path / "bob.xml"
    subprocess.run([sys.executable, "-m", "pytest", "--nbval", str(copy), f"--junitxml={junit}", "-q"],
                   cwd=ROOT, capture_output=True, text=True, timeout=600)
    import xml.etree.ElementTree as ET

    failed_cells = {case.get("name") for case in ET.parse(junit).getroot().iter("testcase")
                    if case.find("failure") is not None}
    nb = nbformat.read(copy, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    by_hand = {cell_key(c): f"Cell {i}" not in failed_cells for i, c in enumerate(code) if cell_kind(c) == "check"}
    # A check the gradebook timed out (its 10 s limit, on a loaded machine) is left out: by hand
    # nbval's own limit applies, so only pass and fail are the same question asked twice.
    decided = {r["check"]: r["status"] == "pass" for r in rows
               if r["student"] == "bob" and r["status"] in ("pass", "fail")}
    assert set(by_hand) == {r["check"] for r in rows if r["student"] == "bob"}
    assert {k: by_hand[k] for k in decided} == decided
    assert True in decided.values() and False in decided.values(), decided


def test_graded_copy_takes_only_exercises_from_the_student():
    lab = load_lab(LAB)
    student = submission({"run_agent": "def run_agent(*a, **k):\n    return 1"}, edit_checks=lambda s: "pass")
    first_setup = next(i for i, c in enumerate(student.cells) if c.cell_type == "code" and not cell_kind(c))
    student.cells[first_setup].source = "tampered setup"
    exercises, notes = graded_exercises(lab, student)
    stubs = {cell_key(c): c.source for _, c in lab.exercises()}
    assert exercises == {**stubs, "run_agent": "def run_agent(*a, **k):\n    return 1"} and notes == []
    nb, program, _ = nbval_graded(lab, student)
    assert [c["source"] for c in program.cells if c["kind"] == "exercise"] == list(exercises.values())
    setup = [c["source"] for c in program.cells if c["kind"] == "setup"]
    assert "tampered setup" not in setup and lab.notebook.cells[first_setup].source in setup
    for released, graded_cell in zip(lab.notebook.cells, nb.cells):
        if cell_kind(released) == "check":  # the released check, bare: the student's "pass" is gone
            assert graded_cell.source == nbval_check_source(released.source)
        elif cell_kind(released) == "tally":
            assert "tally(" not in graded_cell.source
        elif cell_kind(released) != "exercise" and released.cell_type == "code":
            assert graded_cell.source == released.source


@pytest.mark.parametrize("content,reason", [
    (b"", "is empty"), (b"\xff\xfe", "not UTF-8"), (b"[1, 2]", "not a notebook"),
    (b'{"cells": "x"}', "not a notebook"), (b'{"cells": [{"cell_type": "nope"}], "nbformat": 4, '
                                           b'"nbformat_minor": 5, "metadata": {}}', "not a valid notebook"),
])
def test_unreadable_notebooks_have_clear_reasons(tmp_path, content, reason):
    path = tmp_path / "x.ipynb"
    path.write_bytes(content)
    with pytest.raises(LabError, match=reason):
        read_notebook(path)


# ------------------------------------------------------------------------ the one lab matcher
def test_the_lab_matcher_uses_metadata_then_file_name_then_exercises(tiny, tmp_path):
    released = find_released_labs(tiny.labs_dir)
    nb = tiny.submission()
    assert match_lab(Path("whatever.ipynb"), nb, released).lab_id == "00_tiny_lab"
    del nb.metadata["course"]
    assert match_lab(Path("00_tiny_lab.ipynb"), nb, released).lab_id == "00_tiny_lab"
    assert match_lab(Path("bob.ipynb"), nb, released).lab_id == "00_tiny_lab"  # its exercise keys
    for cell in nb.cells:
        cell.metadata.pop("course", None)
    with pytest.raises(LabError, match=r"bob.ipynb is not a notebook of any released lab \(lab id None; "
                                       r"released: 00_tiny_lab\)"):
        match_lab(Path("bob.ipynb"), nb, released)
    with pytest.raises(LabError, match="is lab 00_tiny_lab, not 01_agent_loop_lab: wrong lab submitted"):
        match_lab(Path("x.ipynb"), tiny.submission(), released, only="01_agent_loop_lab")


def test_grade_and_the_pytest_plugin_match_and_refuse_alike(tiny, tmp_path):
    other = tiny.submission()
    other.metadata["course"]["lab"] = "99_elsewhere_lab"
    nbformat.write(other, tmp_path / "erin.ipynb")
    expected = ("erin.ipynb is not a notebook of any released lab (lab id '99_elsewhere_lab'; "
                "released: 00_tiny_lab)")
    plugin = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=",
                             "-p", "course.pytest_plugin", "--lab-mode=grade", f"--labs-dir={tiny.labs_dir}", str(tmp_path / "erin.ipynb")],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert plugin.returncode != 0 and expected in plugin.stdout, plugin.stdout
    with pytest.raises(LabError) as raised:
        match_lab(tmp_path / "erin.ipynb", other, find_released_labs(tiny.labs_dir))
    assert str(raised.value) == expected  # what course.grade records for erin


def test_a_lab_is_not_attempted_only_when_every_exercise_is_the_stub(tiny):
    lab = load_lab(tiny.lab_path)
    assert not_attempted(lab, tiny.submission())
    assert not_attempted(lab, tiny.submission({"add": tiny.submission().cells[2].source + "\n\n"}))
    assert not not_attempted(lab, tiny.submission({"add": "def add(a, b):\n    return a + b"}))


# ------------------------------------------------------------------------ re-runs, jobs, shards
TINY_CLASS = {
    "amir": {"add": "def add(a, b):\n    return a + b", "shout": "def shout(t):\n    return t.upper() + '!'"},
    "bea": {"add": "def add(a, b):\n    return a - b"},
    "chen": {},  # untouched: not attempted
    "eli": {"add": "def add(a, b):\n    return abs(a) + b", "shout": "def shout(t):\n    return t.upper()"},
}


def tiny_class(tiny, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, answers in TINY_CLASS.items():
        nbformat.write(tiny.submission(answers), folder / f"{name}.ipynb")
    (folder / "gus").mkdir(exist_ok=True)
    nbformat.write(tiny.submission({"add": "def add(a, b):\n    return a + b"}), folder / "gus" / "00_tiny_lab.ipynb")
    return folder


def gradebook_files(folder: Path) -> dict[str, str]:
    """The gradebook's files and the feedback files, by name."""
    names = ["gradebook.csv", "gradebook.md", "gradebook.json"]
    names += sorted(p.relative_to(folder).as_posix() for p in (folder / "feedback").glob("*.md"))
    return {name: (folder / name).read_text(encoding="utf-8") for name in names}


@pytest.fixture(scope="module")
def tiny_runs(tiny, tmp_path_factory):
    """The tiny class graded one notebook at a time, two at a time, and in two shards, merged."""
    base = tmp_path_factory.mktemp("tiny_class")
    subs = tiny_class(tiny, base / "submissions")
    runs = {}
    for name, extra in (("sequential", ["--jobs", "1"]), ("parallel", ["--jobs", "2"])):
        grade_here(subs, "--labs", tiny.labs_dir, "--timeout", "30", "--output", base / name, *extra)
        runs[name] = gradebook_files(base / name)
    shards = []
    for k in (1, 2):
        shard = base / f"shard{k}"
        grade_here(subs, "--labs", tiny.labs_dir, "--timeout", "30", "--shard", f"{k}/2", "--output", shard,
                   "--jobs", "1")
        shards.append(shard)
    merged = grade("merge", *shards, "--output", base / "merged")  # as an instructor runs it
    runs["merged"] = gradebook_files(base / "merged")
    return base, subs, runs, shards, merged


def test_the_tiny_class_grades_as_expected(tiny_runs):
    _, _, runs, _, _ = tiny_runs
    rows = list(csv.DictReader(runs["sequential"]["gradebook.csv"].splitlines()))
    earned = {name: sum(int(r["earned"]) for r in rows if r["student"] == name) for name in TINY_CLASS}
    assert earned == {"amir": 3, "bea": 0, "chen": 0, "eli": 1}
    assert "| chen | not attempted | 0 / 3 |" in runs["sequential"]["gradebook.md"]
    assert "| gus | 2 / 3 | 2 / 3 |" in runs["sequential"]["gradebook.md"]


def test_jobs_2_gives_the_same_gradebook_as_one_at_a_time(tiny_runs):
    _, _, runs, _, _ = tiny_runs
    assert runs["parallel"] == runs["sequential"]


def test_two_shards_merged_equal_one_run(tiny_runs):
    _, _, runs, shards, merged = tiny_runs
    students = [{s["student"] for s in json.loads((shard / "gradebook.json").read_text())["submissions"]}
                for shard in shards]
    assert all(students) and not students[0] & students[1], "both shards grade someone, nobody twice"
    assert students[0] | students[1] == set(TINY_CLASS) | {"gus"}
    assert runs["merged"] == runs["sequential"]
    assert "Merged 2 shards" in merged.stdout


def test_shards_are_stable_by_student():
    assert [shard_of(name, 4) for name in ("amir", "bea", "amir")] == [shard_of("amir", 4), shard_of("bea", 4),
                                                                       shard_of("amir", 4)]
    assert {shard_of(f"student{i}", 3) for i in range(30)} == {1, 2, 3}


def test_merge_refuses_a_missing_or_repeated_shard(tiny_runs, tmp_path):
    _, _, _, shards, _ = tiny_runs
    for folders, reason in (([shards[0]], "shard(s) 2/2 missing"),
                            ([shards[0], shards[0], shards[1]], "appears twice")):
        with pytest.raises(SystemExit, match=re.escape(reason)):
            course.grade.main(["merge", *map(str, folders), "--output", str(tmp_path)])


def test_a_rerun_ignores_the_gradebooks_own_files(tiny, tmp_path):
    subs = tiny_class(tiny, tmp_path / "submissions")
    (subs / "old-shard").mkdir()  # an earlier shard's output folder inside the class folder
    (subs / "old-shard" / "gradebook.csv").write_text("student\n", encoding="utf-8")
    before = collect(subs)
    grade_here(subs, "--labs", tiny.labs_dir, "--timeout", "30")
    first = gradebook_files(subs)
    assert [(s.student, s.notebook) for s in collect(subs)] == [(s.student, s.notebook) for s in before]
    grade_here(subs, "--labs", tiny.labs_dir, "--timeout", "30")
    assert gradebook_files(subs) == first
    students = {r["student"] for r in csv.DictReader(first["gradebook.csv"].splitlines())}
    assert students == set(TINY_CLASS) | {"gus"}


# ------------------------------------------------------------------------ reflections
def tiny_lesson() -> nbformat.NotebookNode:
    """A lesson with two questions to think about and their answer cells, as the course writes them."""
    md = nbformat.v4.new_markdown_cell
    cells = [md("# Chapter 00 — tiny"), nbformat.v4.new_code_cell("print(1 + 1)"),
             md("## Things to think about\n\n1. Why add numbers\n   at all?\n2. When does adding "
                "overflow?\n\n**Lab:** `labs/00_tiny_lab.ipynb`."),
             md("### Your answers")]
    cells += [md(f"*Your answer to question {n} here.*", metadata={"tags": ["answer"], "course": {"key": f"think-{n}"}})
              for n in (1, 2)]
    return nbformat.v4.new_notebook(cells=cells)


@pytest.fixture(scope="module")
def reflections_class(tiny, tmp_path_factory):
    base = tmp_path_factory.mktemp("reflections")
    lessons = base / "lessons"
    lessons.mkdir()
    nbformat.write(tiny_lesson(), lessons / "00_tiny.ipynb")
    subs = base / "submissions"
    (subs / "amir").mkdir(parents=True)
    nbformat.write(tiny.submission({"add": "def add(a, b):\n    return a + b"}), subs / "amir" / "00_tiny_lab.ipynb")
    amir = tiny_lesson()
    amir.cells[4].source = "To count things.\n\nAnd to *sum* them."
    nbformat.write(amir, subs / "amir" / "00_tiny.ipynb")
    (subs / "bea").mkdir()
    bea = tiny_lesson()
    del bea.cells[5]  # the second answer cell deleted; the first left as the placeholder
    nbformat.write(bea, subs / "bea" / "00_tiny.ipynb")
    grade_here(subs, "--labs", tiny.labs_dir, "--lessons", lessons, "--timeout", "30",
               "--jobs", "1", "--output", base / "out")
    rows, summary = read_gradebook(base / "out")
    return rows, summary, json.loads((base / "out" / "gradebook.json").read_text(encoding="utf-8"))


def test_a_lesson_is_collected_not_graded(reflections_class):
    rows, summary, _ = reflections_class
    amir = [(r["lab"], r["check"], r["status"], r["points"], r["earned"], r["detail"]) for r in rows
            if r["student"] == "amir" and r["lab"] == "00_tiny"]
    assert amir == [("00_tiny", "think-1", "reflection", "", "", "To count things.\n\nAnd to *sum* them."),
                    ("00_tiny", "think-2", "not answered", "", "", "")]
    assert "| amir | 2 / 3 | 2 / 3 |" in summary, "the lesson adds no column and no points"
    assert "| bea | — | 0 / 3 |" in summary
    assert "1 lab notebooks graded" in summary and "2 lesson notebooks hold reflections" in summary


def test_reflections_show_each_question_and_answer(reflections_class):
    _, summary, _ = reflections_class
    part = summary.split("## Reflections")[1]
    amir = part.split("### amir")[1].split("###")[0]
    assert "**00_tiny** (`amir/00_tiny.ipynb`): 1 of 2 answered" in amir
    assert "1. Why add numbers at all?\n\n   > To count things.\n   >\n   > And to \\*sum\\* them.\n" in amir
    assert "2. When does adding overflow?\n\n   *not answered*" in amir
    bea = part.split("### bea")[1]
    assert "0 of 2 answered" in bea and "the answer cell for think-2 is missing from this copy" in bea


def test_reflections_survive_a_merge(reflections_class, tmp_path):
    _, _, data = reflections_class
    (tmp_path / "shard").mkdir()
    (tmp_path / "shard" / "gradebook.json").write_text(json.dumps(data), encoding="utf-8")
    course.grade.main(["merge", str(tmp_path / "shard"), "--output", str(tmp_path / "merged")])
    rows, summary = read_gradebook(tmp_path / "merged")
    assert [r["status"] for r in rows if r["student"] == "bea"] == ["not answered", "not answered"]
    assert "> To count things." in summary


def _class_with_copies(tmp_path, copies: dict[str, nbformat.NotebookNode]):
    """One student's folder holding these notebooks, saved in the order given (mtime order)."""
    from course.grade.submissions import match_all
    folder = tmp_path / "subs" / "dana"
    folder.mkdir(parents=True)
    for n, (name, nb) in enumerate(copies.items()):
        nbformat.write(nb, folder / name)
        os.utime(folder / name, ns=(10**18 + n * 10**9, 10**18 + n * 10**9))
    subs = collect(tmp_path / "subs")
    match_all(subs, tmp_path / "subs", find_released_labs(ROOT / "labs"), None)
    return {Path(s.notebook).name: s for s in subs}


def test_of_two_copies_the_one_with_work_in_it_is_graded(tmp_path):
    """`X-Copy1.ipynb` sorts before `X.ipynb`: the pristine copy was graded, 'not attempted'."""
    worked = submission({"validate_messages": "def validate_messages(messages):\n    return []\n"})
    subs = _class_with_copies(tmp_path, {"01_agent_loop_lab.ipynb": worked,
                                         "01_agent_loop_lab-Copy1.ipynb": submission({})})
    real, copy = subs["01_agent_loop_lab.ipynb"], subs["01_agent_loop_lab-Copy1.ipynb"]
    assert not real.problem and real.attempted
    assert real.notes == ["graded this notebook of 01_agent_loop_lab, not dana/01_agent_loop_lab-Copy1.ipynb: "
                          "it has work in 1 of 3 exercises (dana/01_agent_loop_lab-Copy1.ipynb: 0)"]
    assert copy.problem.startswith("another notebook of 01_agent_loop_lab from this student, "
                                   "dana/01_agent_loop_lab.ipynb, was graded")


def test_of_two_copies_with_as_much_work_the_newest_is_graded(tmp_path):
    older = submission({"validate_messages": "def validate_messages(messages):\n    return []\n"})
    newer = submission({"validate_messages": "def validate_messages(messages):\n    return ['x']\n"})
    subs = _class_with_copies(tmp_path, {"01_agent_loop_lab.ipynb": older,
                                         "01_agent_loop_lab (copy).ipynb": newer})
    assert not subs["01_agent_loop_lab (copy).ipynb"].problem
    assert "saved more recently" in subs["01_agent_loop_lab (copy).ipynb"].notes[0]
    assert subs["01_agent_loop_lab.ipynb"].problem


def test_the_gradebook_says_which_copy_was_graded_and_why(tiny, tmp_path):
    subs = tmp_path / "subs" / "dana"
    subs.mkdir(parents=True)
    nbformat.write(tiny.submission({}), subs / f"{TINY_LAB}-Copy1.ipynb")
    nbformat.write(tiny.submission(SOLVED), subs / f"{TINY_LAB}.ipynb")
    grade_here(tmp_path / "subs", "--labs", tiny.labs_dir, "--timeout", "30", "--output", tmp_path / "out")
    rows, md = read_gradebook(tmp_path / "out")
    assert {r["notebook"] for r in rows if r["status"] == "pass"} == {f"dana/{TINY_LAB}.ipynb"}
    assert f"graded this notebook of {TINY_LAB}, not dana/{TINY_LAB}-Copy1.ipynb: it has work in 2 of 2" in md


def test_the_pytest_plugin_works_from_any_folder(tiny, tmp_path):
    """Registered by the package (entry point pytest11): no -p, no conftest, another folder."""
    nbformat.write(tiny.submission(SOLVED), tmp_path / f"{TINY_LAB}.ipynb")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--nbval",
                           "--lab-mode=grade", f"--labs-dir={tiny.labs_dir}", f"{TINY_LAB}.ipynb"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert "unrecognized arguments" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_the_pytest_plugin_grades_through_the_one_path(tiny, tmp_path):
    """`pytest --lab-mode=grade` runs the graded copy of the answer key under nbval, as
    course.grade does: one test per check, the failing one with the gradebook's detail and the
    grader's notes; an import of the answers is graded as the stub."""
    half = {"add": "def add(a, b):\n    return a + b", "shout": "from solutions.compaction import check_pairing as shout"}
    nbformat.write(tiny.submission(half), tmp_path / f"{TINY_LAB}.ipynb")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rf",
                           "--lab-mode=grade", f"--labs-dir={tiny.labs_dir}", f"{TINY_LAB}.ipynb"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout and "1 failed" in done.stdout, done.stdout[-2000:]
    assert "FAILED" in done.stdout and "check-shout" in done.stdout.split("FAILED", 1)[1]
    assert "NotImplementedError: write shout" in done.stdout
    assert "note: exercise 'shout' imports the reference solutions: the stub was graded" in done.stdout



# ------------------------------------------------------------------------ the Chinese edition
CHINESE_PLACEHOLDER = "*在这里写下你对第 {n} 题的回答。*"


def chinese(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A notebook as the Chinese edition ships it: prose translated, metadata saying zh-CN."""
    nb.metadata.setdefault("course", {})["language"] = "zh-CN"
    for cell in nb.cells:
        if "answer" in cell.metadata.get("tags", []):
            cell.source = CHINESE_PLACEHOLDER.format(n=cell.metadata["course"]["key"][-1])
        elif cell.cell_type == "markdown":
            cell.source = "（中文说明）" + cell.source
    return nb


@pytest.fixture(scope="module")
def chinese_class(tiny, tmp_path_factory):
    """Chen hands in the Chinese edition of the tiny lab (solved) and of the tiny lesson (one
    answer written, one still the Chinese placeholder); Ada the English lab, solved."""
    base = tmp_path_factory.mktemp("editions")
    (base / "lessons").mkdir()
    (base / "zh-CN" / "lessons").mkdir(parents=True)
    nbformat.write(tiny_lesson(), base / "lessons" / "00_tiny.ipynb")
    nbformat.write(chinese(tiny_lesson()), base / "zh-CN" / "lessons" / "00_tiny.ipynb")
    subs = base / "submissions"
    (subs / "chen").mkdir(parents=True)
    solved = SOLVED
    nbformat.write(chinese(tiny.submission(solved)), subs / "chen" / f"{TINY_LAB}.ipynb")
    lesson = chinese(tiny_lesson())
    lesson.cells[4].source = "为了计数。"
    nbformat.write(lesson, subs / "chen" / "00_tiny.ipynb")
    nbformat.write(tiny.submission(solved), subs / "ada.ipynb")
    grade_here(subs, "--labs", tiny.labs_dir, "--lessons", base / "lessons", "--timeout", "30",
               "--jobs", "1", "--output", base / "out")
    return read_gradebook(base / "out")


def test_a_chinese_submission_is_graded_like_an_english_one_and_says_its_edition(chinese_class):
    rows, summary = chinese_class
    lab = {(r["student"], r["check"]): (r["status"], r["edition"]) for r in rows if r["lab"] == TINY_LAB}
    checks = {check for _, check in lab}
    assert checks and all(lab[("chen", c)] == ("pass", "zh-CN") for c in checks), lab
    assert all(lab[("ada", c)] == ("pass", "en") for c in checks), lab
    assert "2 lab notebooks graded (1 of them the Chinese edition, zh-CN)" in summary


def test_the_chinese_placeholder_is_not_an_answer(chinese_class):
    rows, _ = chinese_class
    chen = [(r["check"], r["status"], r["detail"], r["edition"]) for r in rows
            if r["student"] == "chen" and r["lab"] == "00_tiny"]
    assert chen == [("think-1", "reflection", "为了计数。", "zh-CN"), ("think-2", "not answered", "", "zh-CN")]


def test_the_chinese_lab_01_grades_exactly_as_the_english_one():
    """The shipped Chinese edition of lab 01, solved and unsolved, through the one grading path."""
    from tests.labs.conftest import grade_one

    lab = load_lab(LAB)
    chinese_lab = nbformat.read(ROOT / "zh-CN" / "labs" / LAB.name, as_version=4)
    assert chinese_lab.metadata["course"]["language"] == "zh-CN"
    solved = nbformat.from_dict(chinese_lab)
    for cell in solved.cells:
        if cell_kind(cell) == "exercise":
            cell.source = SOLUTION_SOURCE
    english = grade_one(lab, submission({k: SOLUTION_SOURCE for k in ("validate_messages", "run_agent",
                                                                      "self_test")}))
    assert grade_one(lab, solved) == english
    assert {status for status, _ in english.values()} == {"pass"}
    unsolved = grade_one(lab, chinese_lab)
    assert set(unsolved) == set(english) and {s for s, _ in unsolved.values()} == {"fail"}


def test_the_instructors_language_setting_does_not_reach_grading(tiny, tmp_path, monkeypatch):
    """An instructor's shell may say COURSE_LANGUAGE=zh-CN, or something the course refuses:
    the grading kernels run in English all the same, and grade exactly as before."""
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(tiny.submission(SOLVED), subs / "ada.ipynb")
    nbformat.write(tiny.submission({}), subs / "bo.ipynb")
    books = {}
    for setting in ("en", "zh-CN", "klingon"):
        monkeypatch.setenv("COURSE_LANGUAGE", setting)
        grade_here(subs, "--labs", tiny.labs_dir, "--timeout", "30", "--jobs", "1",
                   "--output", tmp_path / setting)
        rows, _ = read_gradebook(tmp_path / setting)
        books[setting] = [(r["student"], r["check"], r["status"], r["detail"]) for r in rows]
    assert books["zh-CN"] == books["en"] == books["klingon"]
    assert {s for student, _, s, _ in books["en"] if student == "ada"} == {"pass"}
