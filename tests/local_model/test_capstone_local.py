"""Chapter 19's capstone on the real local model (issue 53, item 2: "where installed, on the local
real model"): a shortened task runs through the course's loop with the assembled
manager on SmolLM2-135M, and the run's record is what the trace and the judge say.

SmolLM2-135M makes no tool call on these tasks: its chat template has no place for the tools'
definitions, so it never sees them, and writes prose about the request; its runs fail by the
judge with the state untouched; the test checks the loop and the record, not the
model's skill: whatever the model did, the judge's differences are those of the state its calls
left, and the claims match the trace.
"""
from __future__ import annotations

import copy

import pytest

import course.tracing
from course.givens.capstone import DEV_SEEDS, check_traces, judge_task, make_task, run
from lesson_support.capstone import MANAGERS

SIZE = 5      # user turns: the fewest the sessions allow


# One family in CI (each run costs 20-80 s of one core here, most of it SmolLM2 writing 256-token
# replies); the others run the same loop: python benchmarks/bench_capstone.py --local runs all three.
@pytest.mark.parametrize("family, seed", [("desk", DEV_SEEDS[0])])
def test_a_shortened_task_runs_on_the_local_model(local, local_client, family, seed):
    traced = course.tracing.install() is not None     # the teaching model's client does it itself
    task = make_task(seed, size=SIZE, family=family)
    out = run(MANAGERS["assembled"], task, 1, local_client, model=local.model_name)
    assert out["error"] is None and out["family"] == family
    assert out["requests"] + out["refused"] >= SIZE          # every user turn got a request
    assert out["prompt_tokens"] > 0 and out["cached_tokens"] <= out["prompt_tokens"]
    calls = [c for m in out["history"] for c in m.get("tool_calls") or ()]
    if not calls:                                           # nothing done: the state is the start's
        assert out["wrong"] == judge_task(task, copy.deepcopy(task["db"])) and not out["success"]
    if traced:                                          # (not when COURSE_TRACE=off)
        record = {k: v for k, v in out.items() if k != "history"}
        assert check_traces([record], course.tracing.requests()) == []
