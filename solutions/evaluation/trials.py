"""run_trials: every task under every seed, each trial on its own copy of the task's database."""
from __future__ import annotations

import copy

from solutions.evaluation.judge import judge_task

COUNTED = ("tool_errors", "violations", "turns", "prompt_tokens", "completion_tokens")


def run_trials(agent, tasks: list[dict], config: dict, seeds) -> list[dict]:
    """One result per (task, seed): {"task", "seed", "success", and the agent's counts}.

    `agent(task, config, seed, db)` runs one task on `db` (changing it in place) and returns
    its counts; every trial gets a fresh deep copy of `task["db"]`, so no trial sees another's
    changes, and the judge compares the copy's end state with the task's expected one."""
    results = []
    for task in tasks:
        for seed in seeds:
            before = copy.deepcopy(task["db"])
            db = copy.deepcopy(task["db"])
            outcome = agent(task, config, seed, db) or {}
            row = {"task": task["id"], "seed": seed,
                   "success": judge_task(before, db, task.get("expected") or {})}
            row.update({key: outcome.get(key, 0) for key in COUNTED})
            results.append(row)
    return results
