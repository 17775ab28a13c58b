"""Lab 06's simulated crashes (course.givens.notes.crashes): `os_calls` records and interrupts the
os.fsync / os.replace calls of the code under test, in this process or in another one that
shares the temporary folder (the grader's worker), and nothing else."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from course.givens.notes import SimulatedCrash, os_calls, record_os_calls
from course.givens.notes import crashes
from course.paths import REPO_ROOT


@pytest.fixture(autouse=True)
def patched(tmp_path, monkeypatch):
    """os.fsync / os.replace patched for this test only, temporary files in a folder of its own."""
    monkeypatch.setattr(os, "fsync", os.fsync)
    monkeypatch.setattr(os, "replace", os.replace)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    record_os_calls()


def write(path: Path, text: str) -> None:
    """A small atomic write, as a student's write_atomic would do it."""
    temporary = path.with_name(".tmp-x.part")
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)


def test_the_calls_are_recorded_in_order_with_the_files_they_touch(tmp_path):
    target = tmp_path / "note.md"
    with os_calls() as calls:
        write(target, "new")
    assert [c[0] for c in calls] == ["fsync", "replace"]
    (_, flushed), (_, source, destination, renamed) = calls
    assert flushed == renamed == target.stat().st_ino  # the file flushed is the file renamed
    assert (Path(source).name, Path(destination)) == (".tmp-x.part", target)
    assert target.read_text() == "new"


@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_a_crash_stops_the_call_it_names_and_the_old_file_stays(tmp_path, step):
    target = tmp_path / "note.md"
    target.write_text("old")
    with os_calls(crash_at=step) as calls, pytest.raises(SimulatedCrash, match=step):
        write(target, "new")
    assert calls[-1][0] == step and target.read_text() == "old"


def test_outside_a_block_nothing_is_recorded_or_stopped(tmp_path):
    with os_calls(crash_at="replace"):
        pass
    write(tmp_path / "note.md", "text")  # after the block: the real functions' behaviour
    assert (tmp_path / "note.md").read_text() == "text"
    assert not list(tmp_path.glob("course-os-calls-*")), "the block leaves no control file or log"


def test_only_the_main_thread_counts(tmp_path):
    with os_calls(crash_at="fsync") as calls:
        worker = threading.Thread(target=write, args=(tmp_path / "a.md", "from a thread"))
        worker.start()
        worker.join()
    assert calls == [] and (tmp_path / "a.md").read_text() == "from a thread"


def test_another_process_sharing_the_temporary_folder_is_recorded_and_stopped(tmp_path):
    """The grader's case: the check runs here, the student's code in the worker."""
    target = tmp_path / "note.md"
    target.write_text("old")
    program = ("import os, sys\nfrom pathlib import Path\n"
               "from course.givens.notes import SimulatedCrash, record_os_calls\n"
               "record_os_calls()\n"
               "t = Path(sys.argv[1]); p = t.with_name('.tmp-x.part'); p.write_text('new')\n"
               "fd = os.open(p, os.O_RDONLY); os.fsync(fd); os.close(fd)\n"
               "try:\n    os.replace(p, t)\nexcept SimulatedCrash:\n    print('crashed')\n")
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO_ROOT)}
    with os_calls(crash_at="replace") as calls:
        out = subprocess.run([sys.executable, "-c", program, str(target)], env=env, check=True,
                             capture_output=True, text=True).stdout
    assert out == "crashed\n" and target.read_text() == "old"
    assert [c[0] for c in calls] == ["fsync", "replace"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the control file to another user")
def test_a_control_file_of_another_user_gives_no_orders(tmp_path):
    control = crashes._control_file()
    control.write_text('{"crash_at": "replace", "log": "%s"}' % (tmp_path / "log"))
    os.chown(control, 65534, 65534)
    write(tmp_path / "note.md", "text")  # not stopped, not logged
    assert (tmp_path / "note.md").read_text() == "text" and not (tmp_path / "log").exists()


def test_a_control_file_under_another_uids_name_that_this_user_owns_gives_orders(tmp_path):
    """The confined worker's case: it runs as uid 65534 in its own user namespace, and sees the
    judge's control file (named after the judge's uid) as its own."""
    judge = crashes._control_file().with_name(f"course-os-calls-{os.getuid() + 1}.json")
    judge.write_text('{"crash_at": "replace", "log": "%s"}' % (tmp_path / "log"))
    with pytest.raises(SimulatedCrash):
        write(tmp_path / "note.md", "text")
    assert (tmp_path / "log").read_text().count("replace") == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the control file to another user")
def test_a_control_file_another_user_owns_gives_no_orders_whatever_its_name(tmp_path):
    other = crashes._control_file().with_name("course-os-calls-65534.json")
    other.write_text('{"crash_at": "replace", "log": "%s"}' % (tmp_path / "log"))
    os.chown(other, 65534, 65534)
    write(tmp_path / "note.md", "text")  # not stopped, not logged
    assert (tmp_path / "note.md").read_text() == "text" and not (tmp_path / "log").exists()


@pytest.mark.parametrize("orders", ["not json", '{"crash_at": "rename", "log": "x"}', '{"log": 3}', "[]"])
def test_a_malformed_control_file_gives_no_orders(tmp_path, orders):
    crashes._control_file().write_text(orders)
    write(tmp_path / "note.md", "text")
    assert (tmp_path / "note.md").read_text() == "text"


def test_an_unknown_crash_point_is_a_clear_error():
    with pytest.raises(ValueError, match="crash_at must be"):
        with os_calls(crash_at="rename"):
            pass
