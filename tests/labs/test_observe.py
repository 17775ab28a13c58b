"""What the judge sees of a worker from outside (course.labs.observe), read from /proc:

- tree() finds a process and everything below it, and nothing else;
- once a worker is ready, what its own tree holds is the worker; a process its code starts
  later is in worker_processes(), and a stopped worker is no longer watched;
- WorkerMemory measures how far the worker's peak resident memory rose while its code ran,
  whatever the worker says about itself.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from course.labs import observe
from course.labs.remote import Worker

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads Linux's /proc")

SLEEPER_WITH_CHILD = "import subprocess, time; subprocess.Popen(['sleep', '30']); print('ready', flush=True); time.sleep(30)"

EXERCISE = '''\
import subprocess


def start_sleeper():
    return subprocess.Popen(["sleep", "30"]).pid


def hold(megabytes):
    held = bytearray(megabytes * 1024 * 1024)
    held[::4096] = b"x" * len(held[::4096])  # touched: resident, not only reserved
    return len(held)
'''


def test_a_tree_holds_the_process_and_its_descendants_only():
    parent = subprocess.Popen([sys.executable, "-c", SLEEPER_WITH_CHILD], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline() == "ready\n"
        found = observe.tree(parent.pid)
        assert parent.pid in found and len(found) == 2, found
        assert os.getpid() not in found
        assert all(len(state) == 1 for state in found.values())
    finally:
        for pid in observe.tree(parent.pid):
            os.kill(pid, 9)
        parent.wait()
        parent.stdout.close()


def test_a_tree_of_a_process_that_is_gone_is_empty():
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert observe.tree(int(done.stdout)) == {}


@pytest.fixture
def worker(tmp_path):
    worker = Worker([{"kind": "exercise", "key": "start_sleeper", "source": EXERCISE}], tmp_path,
                    confined=False, timeout=60)
    namespace: dict = {}
    worker.bind(namespace, "start_sleeper", ["start_sleeper", "hold"])
    try:
        yield worker, namespace
    finally:
        worker.stop()


def test_a_process_started_by_the_workers_code_is_seen_and_the_worker_itself_is_not(worker):
    worker, functions = worker
    assert observe.worker_processes() == {}, "the worker itself is not counted"
    sleeper = functions["start_sleeper"]()
    seen = observe.worker_processes()
    assert sleeper in seen and seen[sleeper] not in "ZX"
    assert worker.process.pid not in seen
    os.kill(sleeper, 9)
    pid = worker.process.pid
    worker.stop()
    assert pid not in observe._WORKERS and observe.worker_processes() == {}


def test_the_memory_a_workers_code_holds_is_measured_from_outside(worker):
    _, functions = worker
    memory = observe.WorkerMemory()
    memory.start()
    assert memory.growth() < 8 * 1024 * 1024, "nothing held yet"
    assert functions["hold"](64) == 64 * 1024 * 1024
    assert memory.growth() >= 60 * 1024 * 1024
    memory.start()  # a new span: the old peak is forgotten
    assert memory.growth() < 8 * 1024 * 1024


def test_with_no_worker_running_nothing_is_watched_or_measured():
    assert observe.worker_processes() == {}
    memory = observe.WorkerMemory()
    memory.start()
    assert memory.growth() == 0
