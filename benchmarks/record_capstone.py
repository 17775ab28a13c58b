"""Records the figures lesson 19 prints but does not compute live (issue 53): every reference
manager (lesson_support.capstone.MANAGERS) on the whole development set, every trial, on a
private teaching model of its own (a fresh prompt cache per manager, so that one manager's runs
do not warm the cache for the next), with the scores' table and the trace check; and each manager on the
lesson's own shortened tasks (capstone_lesson.LESSON_TASKS, trial 1), which the lesson runs live
and compares with this recording. Writes data/capstone/baselines.json with its provenance.

    .venv/bin/python benchmarks/record_capstone.py      (a few minutes on 2 cores)

Run it again whenever the world (course/givens/capstone.py), the managers or the teaching model
change, then re-run the lesson (python -m course.notebooks run notebooks/19_capstone.ipynb).
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from datetime import datetime, timezone

from course.givens.capstone import DEV_SEEDS, TRIALS, check_traces, dev_tasks, evaluate, run
from course.llm import serve
from course.paths import REPO_ROOT
from course.tracing import requests
from lesson_support.capstone import MANAGERS
from lesson_support.capstone_lesson import RECORDED, lesson_tasks, run_row

COMMAND = "python benchmarks/record_capstone.py"
WORLD = ("course/givens/", "course/llm/", "solutions/capstone/", "lesson_support/capstone/",
         "lesson_support/capstone_lesson.py")   # what the recorded figures depend on


def main() -> None:
    started = time.perf_counter()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT,
                            capture_output=True, text=True).stdout.strip()
    changed = subprocess.run(["git", "status", "--porcelain", "--", *WORLD], cwd=REPO_ROOT,
                             capture_output=True, text=True).stdout.split("\n")
    if any(line.strip() for line in changed):   # what the recording ran is not that commit alone
        commit += " + uncommitted changes to " + ", ".join(line[3:] for line in changed if line.strip())
    tasks = dev_tasks()
    scores, rows, problems, lesson = {}, [], [], []
    for name, manager in MANAGERS.items():
        with serve() as server:   # each manager on its own cache: its hit rate is its own
            scores[name], runs = evaluate(manager, tasks, server.client())
        problems += check_traces(runs, requests())
        rows += [{"manager": name, **run_row(r), "wrong": r["wrong"][:3]} for r in runs]
        print(f"{name}: score {scores[name]['score']:+.2f}", flush=True)
        with serve() as server:
            lesson += [{"manager": name, "label": label, **run_row(run(manager, task, 1, server.client()))}
                       for label, task in lesson_tasks().items()]
    provenance = {"measured_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                  "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                  "commit": commit, "command": COMMAND, "dev_seeds": list(DEV_SEEDS),
                  "trials": list(TRIALS), "seconds": round(time.perf_counter() - started, 1)}
    RECORDED.parent.mkdir(parents=True, exist_ok=True)
    RECORDED.write_text(json.dumps({"provenance": provenance, "scores": scores, "runs": rows,
                                    "lesson_runs": lesson, "trace_problems": problems},
                                   indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {RECORDED.relative_to(REPO_ROOT)} in {provenance['seconds']} s; trace problems: {len(problems)}")


if __name__ == "__main__":
    main()
