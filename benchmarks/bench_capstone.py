"""The capstone's grading cost per student (issue 53): every reference manager run on the hidden
set (course.givens.capstone.hidden_tasks, TRIALS per task) on a private teaching model, with its
scores and the seconds it took; a student's grading is one such row. Prints ratios, asserts
nothing.

    .venv/bin/python benchmarks/bench_capstone.py [--dev] [--worker | --local]

--worker: a student's manager (a plain sliding window) graded as grading runs it, in the confined
worker over the wire, against the same source called in-process: the wire's share of a
student's grading time.

--local: one shortened task (LOCAL_SIZE user turns) of each family on the local real model
(SmolLM2, one process, one thread), with the naive and the assembled managers: what each run did.
"""
from __future__ import annotations

import sys
import tempfile
import time

from course.givens.capstone import (check_traces, confined_manager, dev_tasks, evaluate,
                                    family_scores, hidden_tasks, table)
from course.llm import serve
from course.tracing import requests
from lesson_support.capstone import MANAGERS


STUDENT = '''
from solutions.tokens import count_request_tokens
from course.givens.capstone import TOOLS


def next_request(history, task):
    head, kept = [{"role": "system", "content": task["system"]}], list(history)
    while len(kept) > 1 and count_request_tokens(head + kept, TOOLS) > task["window"] - task["reply_room"]:
        kept = kept[1:]
        while len(kept) > 1 and kept[0]["role"] != "user":
            kept = kept[1:]
    return {"messages": head + kept}
'''


def worker_timing(tasks, client) -> None:
    namespace: dict = {}
    exec(STUDENT, namespace)
    start = time.perf_counter()
    here, _ = evaluate(namespace["next_request"], tasks, client)
    in_process = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as scratch:
        manager, worker = confined_manager(STUDENT, scratch)
        try:
            start = time.perf_counter()
            graded, _ = evaluate(manager, tasks, client)
            confined = time.perf_counter() - start
        finally:
            worker.stop()
    print(f"a student's grading ({len(tasks)} hidden tasks x {graded['k']} trials): "
          f"{confined:.1f} s in the confined worker, {in_process:.1f} s in-process "
          f"({confined / in_process:.2f}x); same verdicts: "
          f"{all(graded[k] == here[k] for k in ('score', 'success', 'pass_k', 'leaks', 'requests'))} "
          f"(cache figures differ: the second pass finds the first one's prefixes cached)")


LOCAL_SIZE = 5


def local_runs() -> None:
    import json

    import course.local_model
    import course.tracing
    from course.givens.capstone import DEV_SEEDS, FAMILY_DEV_SEEDS, make_task, run

    course.tracing.install()
    picked = {"desk": DEV_SEEDS[0], **{name: seeds[0] for name, seeds in FAMILY_DEV_SEEDS.items()}}
    runs = []
    with course.local_model.serve() as server:
        client = server.client()
        for family, seed in picked.items():
            task = make_task(seed, size=LOCAL_SIZE, family=family)
            for name in ("naive", "assembled"):
                start = time.perf_counter()
                r = run(MANAGERS[name], task, 1, client, model=server.model_name)
                calls = [c["function"]["name"] for m in r["history"] for c in m.get("tool_calls") or ()]
                first = next((m.get("content") or "" for m in r["history"] if m["role"] == "assistant"), "")
                print(json.dumps({"family": family, "manager": name, "success": r["success"],
                                  "wrong": r["wrong"][:3], "requests": r["requests"],
                                  "refused": r["refused"], "leaks": r["leaks"], "calls": calls,
                                  "prompt": r["prompt_tokens"], "cached": r["cached_tokens"],
                                  "completion": r["completion_tokens"], "error": r["error"],
                                  "first reply": first[:100],
                                  "seconds": round(time.perf_counter() - start, 1)}), flush=True)
                r.pop("history")
                runs.append(r)
    print("trace check:", check_traces(runs, requests()) or "every run's claims match its trace")


def main() -> None:
    if "--local" in sys.argv:
        local_runs()
        return
    tasks = dev_tasks() if "--dev" in sys.argv else hidden_tasks()
    client = serve().client()
    if "--worker" in sys.argv:
        worker_timing(tasks, client)
        return
    scores, seconds, problems, per_family = {}, {}, [], {}
    for name, manager in MANAGERS.items():
        start = time.perf_counter()
        scores[name], runs = evaluate(manager, tasks, client)
        seconds[name] = time.perf_counter() - start
        problems += check_traces(runs, requests())
        for family, s in family_scores(runs).items():
            per_family.setdefault(family, {})[name] = s
    print(table(scores))
    for family, by_manager in per_family.items():
        print(f"\n{family} ({by_manager['naive']['runs']} runs per manager)")
        print(table(by_manager))
    print(f"\n{len(tasks)} tasks x {scores['naive']['k']} trials per manager")
    fastest = min(seconds.values())
    for name, s in seconds.items():
        print(f"{name:12s} {s:7.1f} s to grade   {s / fastest:4.1f}x the fastest")
    print("trace check:", "every run's claims match its trace" if not problems else problems[:5])


if __name__ == "__main__":
    main()
