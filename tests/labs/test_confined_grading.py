"""Hostile submissions, graded with their code in the confined worker (a lab marked `worker`).

Every student of this class but one writes a wrong `add` (it returns -1, or never returns) and
attacks the grader from an exercise cell: rewriting later cells' asserts, importing the answers
without a literal import, reading the answers' source, leaving a process behind, killing the
grader, exiting the interpreter, flooding /tmp, writing outside the scratch folder. Each scores
nothing for `add` (its `shout` is right, so its own other check still passes), the honest
student graded in the same run scores everything, and nothing is left on the machine.
"""
from __future__ import annotations

import copy
import csv
import os
import uuid
from pathlib import Path

import nbformat
import pytest

import course.grade
from course.labs import confinement
from tests.labs.conftest import SOLVED, TINY_LAB, tiny_lab_notebook, worker_class



@pytest.fixture(scope="module", autouse=True)
def _needs_confinement():
    """Probed when the tests run, not when they are collected (the probe starts a sandbox)."""
    if confinement.problem() is not None:
        pytest.skip(f"no confinement here: {confinement.problem()}")

MARK = "course-hostile-" + uuid.uuid4().hex[:8]  # names what the attackers leave behind
# A fork bomb, bounded so that it cannot hurt the machine if the limit failed: 300 children
# that sleep; it prints how many it got.
FORKS = ("import os, time\n"
         "forked = 0\n"
         "for _ in range(300):\n"
         "    try:\n"
         "        pid = os.fork()\n"
         "    except OSError:\n"
         "        break\n"
         "    if pid == 0:\n"
         "        time.sleep(30)\n"
         "        os._exit(0)\n"
         "    forked += 1\n"
         "print('forked', forked)\n")
WRONG = "def add(a, b):\n    return -1\n"
ATTACKS = {
    "rewrites_asserts": WRONG + (
        "import ast\n"
        "class NoAsserts(ast.NodeTransformer):\n"
        "    def visit_Assert(self, node):\n"
        "        return ast.Pass()\n"
        "get_ipython().ast_transformers.append(NoAsserts())\n"),
    "imports_answers_by_computed_name": (
        "import importlib\n"
        "def add(a, b):\n"
        "    return importlib.import_module('solu' + 'tions.compaction').__name__ and a + b\n"),
    "execs_the_answers_source": (
        "from course.paths import REPO_ROOT\n"
        "exec(open(REPO_ROOT / 'solutions' / 'agent_loop' / '__init__.py').read())\n"
        "def add(a, b):\n"
        "    return open(REPO_ROOT / 'solutions' / '__init__.py').read() and a + b\n"),
    "leaves_a_process_behind": WRONG + (
        "import subprocess\n"
        f"subprocess.Popen(['sh', '-c', 'exec -a {MARK} sleep 120'], start_new_session=True)\n"),
    "kills_the_grader": WRONG + (
        "import os, signal\n"
        "for pid in (os.getppid(), 1):\n"
        "    try:\n"
        "        os.kill(pid, signal.SIGKILL)\n"
        "    except OSError:\n"
        "        pass\n"),
    "exits_the_interpreter": WRONG + "import os\nos._exit(0)\n",
    "floods_tmp": WRONG + (
        "import os\n"
        "try:\n"
        f"    with open('/tmp/{MARK}', 'wb') as f:\n"
        "        for _ in range(1024):\n"
        "            f.write(b'x' * 2**20)\n"
        "except OSError:\n"
        "    pass\n"),
    "writes_outside": WRONG + (
        "import os\n"
        f"for folder in ('/work', '/root', os.path.expanduser('~'), '/var/tmp', '/etc'):\n"
        "    try:\n"
        f"        open(os.path.join(folder, '{MARK}'), 'w').write('x')\n"
        "    except OSError:\n"
        "        pass\n"),
    "never_returns": "def add(a, b):\n    while True:\n        pass\n",
    "fork_bomb": WRONG + FORKS,
}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    labs, subs = worker_class(tmp_path_factory, {"honest": SOLVED["add"], **ATTACKS}, "hostile")
    out = tmp_path_factory.mktemp("hostile_out")
    assert course.grade.main([str(subs), "--labs", str(labs), "--timeout", "5", "--jobs", "2",
                              "--output", str(out)]) == 0
    rows = list(csv.DictReader((out / "gradebook.csv").open(encoding="utf-8")))
    return {(r["student"], r["check"]): r for r in rows}, out


def test_the_honest_student_graded_beside_the_attackers_scores_everything(graded_class):
    rows, _ = graded_class
    assert {check: r["status"] for (student, check), r in rows.items() if student == "honest"} == \
        {"check-add-pair": "pass", "check-add-negative": "pass", "check-shout": "pass"}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_attack_from_an_exercise_earns_nothing_for_the_attacked_checks(graded_class, attack):
    rows, _ = graded_class
    assert rows[(attack, "check-add-pair")]["earned"] == "0"
    assert rows[(attack, "check-add-negative")]["earned"] == "0"


@pytest.mark.parametrize("attack", ["rewrites_asserts", "leaves_a_process_behind", "floods_tmp",
                                    "writes_outside", "never_returns"])
def test_an_attack_costs_only_its_own_checks(graded_class, attack):
    rows, _ = graded_class
    assert rows[(attack, "check-shout")]["status"] == "pass", rows[(attack, "check-shout")]["detail"]


def test_the_answers_are_not_in_the_sandbox(graded_class):
    rows, _ = graded_class
    assert "No module named 'solutions'" in rows[("imports_answers_by_computed_name", "check-add-pair")]["detail"]
    assert rows[("execs_the_answers_source", "check-add-pair")]["status"] == "fail"


def test_a_timeout_and_a_dead_worker_are_said_plainly(graded_class):
    rows, _ = graded_class
    assert "did not return within 5 s" in rows[("never_returns", "check-add-pair")]["detail"]
    assert "exited with status 0 (os._exit? sys.exit? a crash?)" in rows[("exits_the_interpreter", "check-add-pair")]["detail"]


def test_nothing_the_attackers_started_or_wrote_is_left(graded_class):
    _, out = graded_class
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if MARK.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                left.append(pid)
        except OSError:
            continue
    assert left == [], "a process started by a submission outlived its grading"
    for folder in ("/tmp", "/work", "/root", os.path.expanduser("~"), "/var/tmp", "/etc"):
        assert not (Path(folder) / MARK).exists(), f"a submission wrote into {folder}"


def test_a_fork_bomb_stops_at_the_process_limit_even_for_root(tmp_path):
    # RLIMIT_NPROC does not bind root: a grader run as root holds the worker in a pids cgroup.
    import subprocess
    import sys

    limits = confinement.Limits(processes=32)
    group = confinement.ProcessGroup(limits)
    try:
        done = subprocess.run(confinement.command([sys.executable, "-c", FORKS], tmp_path, limits),
                              capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              preexec_fn=confinement.set_limits(limits, group))
    finally:
        group.close()
    forked = int(done.stdout.split()[-1])
    assert 0 < forked < limits.processes, done.stdout + done.stderr


def test_a_worker_reads_only_the_earlier_answers_its_lab_gives(tmp_path):
    """A later chapter's lab may give an earlier chapter's answer (lab 11 gives chapter 04's
    check_pairing): its worker can import that one, and no other answer."""
    import subprocess
    import sys
    probe = ("import importlib.util as u, solutions.compaction\n"
             "print(solutions.compaction.check_pairing.__name__,"
             " u.find_spec('solutions.production_compaction'), u.find_spec('solutions.agent_loop'))")
    argv = confinement.command([sys.executable, "-c", probe], tmp_path,
                               answers=("solutions.compaction",))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          preexec_fn=confinement.set_limits())
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["check_pairing", "None", "None"]


def test_an_answer_list_naming_no_module_is_refused():
    for bad in ("solutions.nothing_here", "os.path", "solutions.../etc"):
        with pytest.raises(ValueError, match="solutions"):
            confinement.answer_paths((bad,))


def test_a_checks_only_cell_runs_beside_the_checks_and_never_in_the_worker(tmp_path):
    """Lab 10's harness (lesson_support, which uses answers) is set up for the checks only: the
    graded copy keeps the cell, the worker's program does not have it."""
    from course.labs import Lab, nbval_unsolved
    nb = tiny_lab_notebook()
    harness = nbformat.v4.new_code_cell("from lesson_support import injection as li",
                                        metadata={"tags": ["checks-only"]})
    nb.cells.insert(2, harness)
    nb.metadata["course"]["worker"] = True
    graded, program = nbval_unsolved(Lab(tmp_path / f"{TINY_LAB}.ipynb", nb, TINY_LAB, "tiny_solution"))
    assert [c["source"] for c in program.cells if c["kind"] == "setup"] == [nb.cells[1].source]
    assert harness.source in [c.source for c in graded.cells]


def test_an_exercise_reading_a_checks_only_name_is_noted(tmp_path):
    """Such an exercise works in the student's kernel and fails where it is graded: the
    gradebook says why."""
    from course.labs import Lab, graded_exercises
    nb = tiny_lab_notebook()
    nb.cells.insert(2, nbformat.v4.new_code_cell("OFFSET = 0", metadata={"tags": ["checks-only"]}))
    nb.metadata["course"]["worker"] = True
    lab = Lab(tmp_path / f"{TINY_LAB}.ipynb", nb, TINY_LAB, "tiny_solution")
    student = copy.deepcopy(nb)
    add = next(c for c in student.cells if c.metadata.get("course", {}).get("key") == "add")
    add.source = "def add(a, b):\n    return a + b + OFFSET + len(PAIR)\n"
    _, notes = graded_exercises(lab, student)
    assert notes == ["exercise 'add' reads OFFSET, which only the checks' set-up defines: graded "
                     "where those names do not exist"]


def groups_or_skip(limit: int = 8) -> confinement.ProcessGroup:
    group = confinement.ProcessGroup(confinement.Limits(processes=limit))
    if not group.paths:
        pytest.skip("no cgroup here (not root, or no controller): only the rlimits apply")
    return group


def test_a_graders_empty_group_survives_another_grader_starting():
    """Two graders (or two chunks of one) start workers at the same moment: the second's clean-up
    of stale groups must not remove the first's group before its worker has joined it (the
    worker's start then failed, and a student lost the checks of her first exercise)."""
    import subprocess
    import sys

    first = groups_or_skip()
    paths = list(first.paths)
    second = confinement.ProcessGroup(confinement.Limits(processes=8))
    try:
        assert all(p.exists() for p in paths), "another grader's clean-up removed a living grader's empty group"
        done = subprocess.run([sys.executable, "-c", "pass"], preexec_fn=confinement.set_limits(group=first))
        assert done.returncode == 0
    finally:
        first.close()
        second.close()


def test_a_dead_graders_group_is_removed():
    import subprocess

    probe = groups_or_skip()
    roots = [path.parent for path in probe.paths]
    probe.close()
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = [root / f"course-grade-{gone.pid}-1" for root in roots]
    for path in stale:
        path.mkdir()
    try:
        confinement.ProcessGroup(confinement.Limits(processes=8)).close()
        assert [p for p in stale if p.exists()] == [], "a group left by a grader that is gone was kept"
    finally:
        for path in stale:
            if path.exists():
                path.rmdir()


def test_a_worker_that_cannot_be_started_says_so(tmp_path, monkeypatch):
    """A start that fails in the grader (here its preexec step) is a WorkerStopped naming the
    cause, which the exercise's names report (not a bare error that leaves them undefined)."""
    from course.labs import remote

    def cannot_join(limits=None, group=None):
        def apply():
            raise FileNotFoundError("the pids group is gone")
        return apply

    monkeypatch.setattr(confinement, "set_limits", cannot_join)
    monkeypatch.setattr(confinement, "command", lambda argv, *a, **k: argv)
    worker = remote.Worker([], tmp_path, confined=True, timeout=5)
    namespace = {}
    with pytest.raises(remote.WorkerStopped, match="could not be started"):
        worker.bind(namespace, "f", ["f"])
    with pytest.raises(remote.WorkerStopped, match="f cannot run: .*could not be started"):
        namespace["f"]()
