"""Hostile submissions against the sandbox itself (issue 47, items 1-4), judged from outside.

A class of the tiny lab (graded in the confined worker) where every student but one writes a
wrong `add` and, from the exercise cell, attacks the sandbox: reading the grader's environment
through /proc, holding memory in four child processes, filling the scratch folder, stopping
bubblewrap's init with ptrace, spinning on the CPU in children. While the class is graded, an
observer in this process reads /proc and the disk: each student's sandbox is the process tree
below the bwrap whose arguments name that student's folder. What the observer saw, the
gradebook and what is left afterwards decide; nothing the worker says is believed.
"""
from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

import course.grade
from course.labs import confinement
from tests.labs.conftest import SOLVED, worker_class


@pytest.fixture(scope="module", autouse=True)
def _needs_confinement():
    if confinement.problem() is not None:
        pytest.skip(f"no confinement here: {confinement.problem()}")


MARK = "course-sandbox-" + uuid.uuid4().hex[:8]  # names the attackers' processes and the secret
SECRET = f"{MARK}-secret-value"
WRONG = "def add(a, b):\n    return -1\n"
# Children that each hold 900 MiB, touched, until all four hold it (or they waited long enough).
HOLD = ("import os, sys, time\n"
        "block = bytearray(900 * 2**20)\n"
        "for i in range(0, len(block), 4096):\n"
        "    block[i] = 1\n"
        "open(f'held-{os.getpid()}', 'w').close()\n"
        "for _ in range(400):\n"
        "    if len([n for n in os.listdir('.') if n.startswith('held-')]) >= 4:\n"
        "        break\n"
        "    time.sleep(0.05)\n"
        "time.sleep(1)\n")
SPIN = "while True:\n    pass\n"
ATTACKS = {
    # what every environment and command line the sandbox can read holds of a secret, returned
    # into the gradebook (only that: a detail may be cut short)
    "reads_the_graders_environment": (
        "import os\n"
        "def add(a, b):\n"
        "    found = ['read:']\n"
        "    for pid in ['self', '1', *[p for p in os.listdir('/proc') if p.isdigit()]]:\n"
        "        for what in ('environ', 'cmdline'):\n"
        "            try:\n"
        "                text = open(f'/proc/{pid}/{what}', 'rb').read().decode('utf-8', 'replace')\n"
        "            except OSError:\n"
        "                continue\n"
        "            found += [entry for entry in text.split('\\0') if 'SECRET' in entry]\n"
        "    return ' '.join(found)\n"),
    "holds_memory_in_children": WRONG + (
        "import subprocess, sys\n"
        f"children = [subprocess.Popen([sys.executable, '-c', {HOLD!r}, '{MARK}-memory'])\n"
        "            for _ in range(4)]\n"
        "for child in children:\n"
        "    child.wait()\n"),
    # each call writes 2 GB into the scratch folder (10 files of 200 MB, each under the file
    # size limit) before it returns a wrong sum
    "fills_the_scratch": (
        "def add(a, b):\n"
        "    for n in range(10):\n"
        "        try:\n"
        "            with open(f'fill-{n}', 'wb') as f:\n"
        "                for _ in range(200):\n"
        "                    f.write(b'x' * 2**20)\n"
        "        except OSError:\n"
        "            break\n"
        "    return -1\n"),
    "stops_its_init": WRONG + (
        "import ctypes, os, signal\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "attached = libc.ptrace(16, 1, 0, 0)  # PTRACE_ATTACH: bubblewrap's init stops\n"
        "try:\n"
        "    os.kill(1, signal.SIGSTOP)\n"
        "except OSError:\n"
        "    pass\n"),
    "spins_in_children": WRONG + (
        "import subprocess, sys\n"
        f"spinners = [subprocess.Popen([sys.executable, '-c', {SPIN!r}, '{MARK}-spin'])\n"
        "            for _ in range(3)]\n"),
}


class Observer(threading.Thread):
    """Reads each student's sandbox from /proc and the disk while the class is graded."""

    def __init__(self, students):
        super().__init__(daemon=True)
        self.students = students
        self.stop = threading.Event()
        self.memory = dict.fromkeys(students, 0)     # the most anonymous memory the tree held
        self.scratch = dict.fromkeys(students, 0)    # the largest size of the scratch folder
        self.tasks = dict.fromkeys(students, 0)      # the most processes at once in the tree
        self.stopped = dict.fromkeys(students, False)  # a process of the tree seen stopped (T/t)
        self.capabilities: dict[str, set[str]] = {s: set() for s in students}  # the workers' CapEff
        self.groups: set[str] = set()                # the cgroups the sandboxes were in

    def run(self):
        while not self.stop.is_set():
            self.look()
            self.stop.wait(0.02)

    def look(self):
        table = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                status = Path(f"/proc/{pid}/status").read_text(errors="replace")
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            table[int(pid)] = (int(fields["PPid"]), argv, fields)
        children = {}
        for pid, (parent, _, _) in table.items():
            children.setdefault(parent, []).append(pid)
        for pid, (_, argv, _) in table.items():
            if not argv[0].endswith(b"bwrap"):
                continue
            student = next((s for s in self.students
                            if any(f"/graded/{s}/".encode() in a for a in argv)), None)
            if student is None:
                continue
            tree, todo = [], [pid]
            while todo:
                current = todo.pop()
                tree.append(current)
                todo += children.get(current, [])
            resident = 0
            for member in tree:
                _, member_argv, fields = table[member]
                resident += _anonymous(member, fields)
                self.stopped[student] |= fields["State"].split()[0] in "Tt"
                if member_argv[1:3] == [b"-m", b"course.labs.worker"]:
                    self.capabilities[student].add(fields["CapEff"].strip())
                try:
                    self.groups |= {line.split(":", 2)[2] for line in
                                    Path(f"/proc/{member}/cgroup").read_text().splitlines()
                                    if "course-grade-" in line}
                except OSError:
                    pass
            self.memory[student] = max(self.memory[student], resident)
            self.tasks[student] = max(self.tasks[student], len(tree))
            scratch = next((Path(a.decode()) for a in argv if a.endswith(b".scratch")), None)
            if scratch is not None:
                self.scratch[student] = max(self.scratch[student], _size(scratch))


def _anonymous(pid: int, fields: dict) -> int:
    """The anonymous memory a process holds (what a program allocates), pages shared by forked
    processes divided among them (Pss_Anon): summed over a tree, what its memory cgroup is
    charged for at least. (Libraries, mapped from files, are left out: their pages are charged
    to whoever read them first, most often not the sandbox.)"""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss_Anon:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(fields.get("RssAnon", "0 kB").split()[0]) * 1024


def _size(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    labs, subs = worker_class(tmp_path_factory, {"honest": SOLVED["add"], **ATTACKS}, "sandbox_class")
    out = tmp_path_factory.mktemp("sandbox_out")
    observer = Observer(["honest", *ATTACKS])
    os.environ["COURSE_TEST_SECRET"] = SECRET  # the grader's environment holds a secret
    observer.start()
    try:
        assert course.grade.main([str(subs), "--labs", str(labs), "--timeout", "10", "--jobs", "2",
                                  "--output", str(out)]) == 0
    finally:
        observer.stop.set()
        observer.join()
        del os.environ["COURSE_TEST_SECRET"]
    for student in observer.students:  # the bounds as seen from outside (pytest -s shows them)
        print(f"{student}: peak anonymous memory {observer.memory[student] / 2**20:.0f} MiB, scratch "
              f"{observer.scratch[student] / 2**20:.0f} MiB, tasks {observer.tasks[student]}")
    rows = list(csv.DictReader((out / "gradebook.csv").open(encoding="utf-8")))
    return {(r["student"], r["check"]): r for r in rows}, out, observer


def test_the_honest_student_beside_the_attackers_scores_everything(graded):
    rows, _, _ = graded
    assert {check: r["status"] for (student, check), r in rows.items() if student == "honest"} == \
        {"check-add-pair": "pass", "check-add-negative": "pass", "check-shout": "pass"}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_attack_on_the_sandbox_earns_nothing_and_costs_only_its_checks(graded, attack):
    rows, _, _ = graded
    assert rows[(attack, "check-add-pair")]["earned"] == "0"
    assert rows[(attack, "check-shout")]["status"] == "pass", rows[(attack, "check-shout")]["detail"]


def test_nothing_of_the_graders_environment_reaches_the_sandbox(graded):
    """Item 1: bubblewrap's init kept the grader's environment, readable at /proc/1/environ."""
    rows, out, _ = graded
    detail = rows[("reads_the_graders_environment", "check-add-pair")]["detail"]
    assert "got 'read:" in detail, detail  # the attack ran and returned what it found
    for name in ("gradebook.csv", "gradebook.md", "gradebook.json"):
        assert SECRET not in (out / name).read_text(encoding="utf-8"), f"the secret reached {name}"


def test_four_children_cannot_hold_more_than_the_sandboxs_memory(graded):
    """Item 3: RLIMIT_AS bound each process (3 GiB), not the tree: 4 x 900 MiB were held."""
    _, _, observer = graded
    peak = observer.memory["holds_memory_in_children"]
    assert peak > 900 * 2**20, "the attack never ran (nothing held): the test proves nothing"
    if not _controller("memory"):
        pytest.skip("no memory cgroup here: only the per-process limit applies")
    # The observer reads the tree process by process, not at one instant: a child killed at the
    # limit and one still growing may both be counted, hence a margin (4 x 900 MiB is 3.5 GiB).
    bound = confinement.Limits().sandbox_memory_bytes * 1.05
    assert peak <= bound, f"the sandbox held {peak / 2**30:.2f} GiB"


def test_the_scratch_folder_holds_no_more_than_its_bound(graded):
    """Item 2: the scratch was on the host disk with no bound while a call wrote (2 GB here),
    and what a call left outside its tmp/ stayed for the rest of the notebook, failing every
    later call (here check-shout: see the test above)."""
    _, _, observer = graded
    peak = observer.scratch["fills_the_scratch"]
    assert peak > 100 * 2**20, "the attack never wrote: the test proves nothing"
    if os.geteuid() != 0:
        pytest.skip("not root: the scratch is bounded only after each call (remote.check_scratch)")
    assert peak <= confinement.Limits().scratch_bytes, f"the scratch held {peak / 2**20:.0f} MiB"


def test_the_worker_holds_no_capabilities_and_cannot_stop_its_init(graded):
    """Item 4: the worker had near-full capabilities in its user namespace and could stop
    bubblewrap's init with ptrace (the sandbox then hung until the call's timeout)."""
    _, _, observer = graded
    assert observer.capabilities["stops_its_init"], "no worker of the attacker was seen"
    assert observer.capabilities["honest"] == {"0000000000000000"}
    assert observer.capabilities["stops_its_init"] == {"0000000000000000"}
    assert not observer.stopped["stops_its_init"], "a process of the sandbox was stopped by the worker"


def test_a_grading_run_leaves_no_cgroups_behind(tmp_path_factory):
    """Item 4: nbval ends each judge's kernel with SIGKILL, so the last worker's cgroups of a run
    stayed (empty; only a later grader's start removed them). One student, one job: nothing
    else of the run can remove them."""
    if os.geteuid() != 0:
        pytest.skip("not root: no cgroups are made")
    labs, subs = worker_class(tmp_path_factory, {"honest": SOLVED["add"]}, "one_student")
    observer = Observer(["honest"])
    observer.start()
    try:
        assert course.grade.main([str(subs), "--labs", str(labs), "--timeout", "10", "--jobs", "1",
                                  "--output", str(tmp_path_factory.mktemp("one_out"))]) == 0
    finally:
        observer.stop.set()
        observer.join()
    assert observer.groups, "no sandbox was seen in a cgroup of the grader's"
    left = [g for g in observer.groups if any(Path(r, g.lstrip("/")).exists() for r in _roots())]
    assert left == [], f"cgroups left behind: {left}"


def _roots():
    return [p for p in Path("/sys/fs/cgroup").iterdir() if p.is_dir()] + [Path("/sys/fs/cgroup")]


def _controller(name: str) -> bool:
    group = confinement.ProcessGroup(confinement.Limits())
    try:
        return name in group.controllers
    finally:
        group.close()


# ------------------------------------------------------------------ the limits, one at a time
def _run(program: str, scratch: Path, limits: confinement.Limits, group=None):
    return subprocess.run(confinement.command([sys.executable, "-c", program], scratch, limits),
                          capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          preexec_fn=confinement.set_limits(limits, group))


def test_a_process_spinning_past_its_cpu_time_is_killed(tmp_path):
    """CPU time, not wall time: a loaded machine cannot make an honest worker reach it."""
    done = _run(SPIN, tmp_path, confinement.Limits(cpu_seconds=1))
    assert done.returncode != 0
    assert done.returncode in (-signal.SIGXCPU, -signal.SIGKILL, 128 + signal.SIGXCPU,
                               128 + signal.SIGKILL), (done.returncode, done.stderr)


def test_the_sandbox_gets_at_most_its_share_of_the_cpus(tmp_path):
    """The cpu controller caps the whole tree's CPUs at a time (here a tenth of one): a
    process that computes is throttled, and finishes."""
    limits = confinement.Limits(cpus=0.1)
    group = confinement.ProcessGroup(limits)
    try:
        if "cpu" not in group.controllers:
            pytest.skip("no cpu cgroup here: only the per-process CPU time applies")
        done = _run("import time\nend = time.process_time() + 0.5\n"
                    "while time.process_time() < end:\n    pass\n", tmp_path, limits, group)
        throttled = group.throttled()
    finally:
        group.close()
    assert done.returncode == 0, done.stderr
    assert throttled > 0


def test_a_graders_cgroups_are_removed_when_its_worker_is_done(tmp_path):
    group = confinement.ProcessGroup(confinement.Limits())
    if not group.paths:
        pytest.skip("no cgroup here (not root, or no controller)")
    paths = list(group.paths)
    done = _run("import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n",
                tmp_path, confinement.Limits(), group)
    assert done.returncode == 0, done.stderr
    assert group.close()
    assert [p for p in paths if p.exists()] == []


# ------------------------------------------------------------------ what the judge reads of it
def test_the_judge_reads_no_link_fifo_or_oversized_file_the_student_left(tmp_path):
    """Item 4: a check reading a file the student's code made must not follow it to /dev/zero
    (read for ever, in the one process that is not confined), block on a FIFO, or hold a huge
    file."""
    from course.labs.observe import read_student_file
    (tmp_path / "note.md").write_bytes(b"text")
    (tmp_path / "zero").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "big").write_bytes(b"x" * 101)
    assert read_student_file(tmp_path / "note.md") == b"text"
    for name, said in (("zero", "is a link"), ("fifo", "not a regular file"), ("big", "more than 100 bytes")):
        with pytest.raises(OSError, match=said):
            read_student_file(tmp_path / name, limit=100)


def test_a_crash_log_replaced_by_a_link_to_dev_zero_is_not_read(tmp_path):
    """Lab 06's os_calls reads back the log the worker's patched calls append to: the student's
    code can put a link to /dev/zero in its place. Run with 1 GiB of address space, so that an
    unbounded read ends in MemoryError rather than in the machine's memory."""
    program = ("import os, resource, tempfile\n"
               "resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))\n"
               f"tempfile.tempdir = {str(tmp_path)!r}\n"
               "from course.givens.notes import os_calls, record_os_calls\n"
               "record_os_calls()\n"
               "with os_calls() as calls:\n"
               "    log = __import__('json').load(open(tempfile.gettempdir() + f'/course-os-calls-{os.getuid()}.json'))['log']\n"
               "    os.unlink(log)\n"
               "    os.symlink('/dev/zero', log)\n"
               "print('calls', calls)\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.split() == ["calls", "[]"]
