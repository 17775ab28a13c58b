"""The capstone's grading cost per student (issue 53): every reference manager run on the hidden
set (course.givens.capstone.hidden_tasks, TRIALS per task) on a private teaching model, with its
scores and the seconds it took; a student's grading is one such row. Prints ratios, asserts
nothing.

    .venv/bin/python benchmarks/bench_capstone.py [--dev]
"""
from __future__ import annotations

import sys
import time

from course.givens.capstone import check_traces, dev_tasks, evaluate, hidden_tasks, table
from course.llm import serve
from course.tracing import requests
from lesson_support.capstone import MANAGERS


def main() -> None:
    tasks = dev_tasks() if "--dev" in sys.argv else hidden_tasks()
    client = serve().client()
    scores, seconds, problems = {}, {}, []
    for name, manager in MANAGERS.items():
        start = time.perf_counter()
        scores[name], runs = evaluate(manager, tasks, client)
        seconds[name] = time.perf_counter() - start
        problems += check_traces(runs, requests())
    print(table(scores))
    print(f"\n{len(tasks)} tasks x {scores['naive']['k']} trials per manager")
    fastest = min(seconds.values())
    for name, s in seconds.items():
        print(f"{name:12s} {s:7.1f} s to grade   {s / fastest:4.1f}x the fastest")
    print("trace check:", "every run's claims match its trace" if not problems else problems[:5])


if __name__ == "__main__":
    main()
