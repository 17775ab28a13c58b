"""Parts of the capstone's grading (course.grade.capstone) that need no class: what the judge
accepts as a request, the baselines' cache, the missing hidden set, and merging shards.
(tests/labs/test_grade_capstone.py grades a class end to end.)"""
from __future__ import annotations

import json

import pytest

from course.givens.capstone import ManagerError
from course.grade.capstone import BASELINES_FILE, MAX_REQUEST_BYTES, Judged, Sets, baselines

TASK = {"system": "You are the desk.", "window": 8192, "reply_room": 400}
GOOD = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]}


@pytest.mark.parametrize("reply", [
    {"messages": [{"role": "user", "content": object()}]},        # not data (a handle over the wire)
    {"messages": [{"role": "user", "content": float("nan")}]},    # not JSON
    {"messages": [{"role": "user", "content": "x" * (MAX_REQUEST_BYTES + 1)}]},  # far over any window
    {"messages": []}, "a string", {"messages": GOOD["messages"], "tools": []},
])
def test_what_is_not_a_request_ends_the_run_in_the_judges_words(reply):
    judged = Judged(lambda history, task: reply, budget=60)
    with pytest.raises(ManagerError):
        judged([], TASK)
    assert judged.ending == "not a request"


def test_a_request_is_passed_on_as_plain_data_and_the_budget_is_kept():
    judged = Judged(lambda history, task: GOOD, budget=60)
    assert judged([], TASK) == GOOD and judged.ending is None and 0 < judged.left <= 60
    judged.left = 0
    with pytest.raises(RuntimeError, match="budget"):
        judged([], TASK)
    assert judged.ending == "budget"


def test_an_exception_of_the_manager_is_counted_as_raised():
    def manager(history, task):
        raise KeyError("the student's words")
    judged = Judged(manager, budget=60)
    with pytest.raises(KeyError):
        judged([], TASK)
    assert judged.ending == "raised"


def test_the_baselines_are_computed_once_per_hidden_set(tmp_path):
    sets = Sets(tasks=1, size=5)
    first = baselines(sets, tmp_path)
    assert set(first["rows"]) == {"naive", "assembled"} and first["rows"]["naive"]["runs"] == 2
    cached = json.loads((tmp_path / BASELINES_FILE).read_text(encoding="utf-8"))
    cached["rows"]["naive"]["score"] = 0.123  # a mark: read back only if not recomputed
    (tmp_path / BASELINES_FILE).write_text(json.dumps(cached), encoding="utf-8")
    assert baselines(sets, tmp_path)["rows"]["naive"]["score"] == 0.123
    other = Sets(tasks=1, size=6)  # another set of tasks: another digest, computed afresh
    assert other.digest() != sets.digest()
    assert baselines(other, tmp_path)["rows"]["naive"]["score"] != 0.123


def test_a_missing_hidden_set_is_refused_before_grading(tmp_path, capsys):
    from tests.labs.test_grade_capstone import LAB_ID, capstone_lab

    import nbformat
    from course.grade import main

    labs, subs = tmp_path / "labs", tmp_path / "class"
    labs.mkdir()
    (subs / "ann").mkdir(parents=True)
    nbformat.write(capstone_lab(), labs / f"{LAB_ID}.ipynb")
    nbformat.write(capstone_lab(), subs / "ann" / f"{LAB_ID}.ipynb")
    with pytest.raises(SystemExit):
        main([str(subs), "--labs", str(labs), "--output", str(tmp_path / "out"),
              "--capstone-hidden", str(tmp_path / "nowhere.json")])
    assert "nowhere.json is missing" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_merging_shards_keeps_the_capstone_section(tmp_path):
    from course.grade.gradebook import write_gradebook
    from course.grade.shards import merge
    from course.grade.submissions import Submission

    section = {"digest": "d1", "rows": {"naive": {"score": -0.5, "success": 0.1, "pass_k": 0.0, "k": 2,
                                                  "leaks": 3, "tokens": 1000.0, "cost": 0.1, "cache": 0.5,
                                                  "runs": 4}}, "problem": ""}
    for k in (1, 2):
        write_gradebook([Submission(f"s{k}", "x.ipynb", problem="nothing")], {}, tmp_path / str(k),
                        shard=f"{k}/2", capstone=section)
    merge([tmp_path / "1", tmp_path / "2"], tmp_path / "all")
    data = json.loads((tmp_path / "all" / "gradebook.json").read_text(encoding="utf-8"))
    assert data["capstone"] == section
    assert "*baseline: naive*" in (tmp_path / "all" / "gradebook.md").read_text(encoding="utf-8")


@pytest.mark.skipif(__import__("course.labs", fromlist=["confinement"]).confinement.problem() is not None,
                    reason="no confinement here")
def test_the_budget_counts_the_workers_cpu_time_not_its_waiting(tmp_path):
    """A manager that computes spends its budget; one that sleeps as long does not (a loaded
    machine slows an honest manager's wall clock, never its CPU time)."""
    from course.grade.capstone import WorkerClock, _worker_manager

    source = '''
import time


def next_request(history, task):
    if task["work"]:
        start = time.process_time()
        while time.process_time() - start < 0.5:   # half a second of this process's CPU
            pass
    else:
        time.sleep(1.0)
    return {"messages": [{"role": "user", "content": "hi"}]}
'''
    manager, worker = _worker_manager({"cells": [{"kind": "exercise", "key": "next_request", "source": source}],
                                       "answers": [], "confined": True}, tmp_path)
    try:
        judged = Judged(manager, 60, WorkerClock(worker))
        judged([], {**TASK, "work": False})
        slept = 60 - judged.left
        judged([], {**TASK, "work": True})
        worked = 60 - judged.left - slept
    finally:
        worker.stop()
    assert worked >= 0.45 and slept < 0.3, (worked, slept)
