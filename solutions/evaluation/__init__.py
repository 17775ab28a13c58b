"""Chapter 12's answers: judge a task by the database's end state, run seeded trials, put an
interval on a success rate (Wilson, pass^k), ablate one factor at a time (paired), and lint a
system prompt built from sections. The task world is a given (course/givens/task_world.py)."""
from solutions.evaluation.ablation import ablate
from solutions.evaluation.judge import judge_task
from solutions.evaluation.lint import lint_prompt
from solutions.evaluation.self_test import self_test
from solutions.evaluation.stats import (pass_hat_k, sign_test, success_interval, trials_needed,
                                        wilson)
from solutions.evaluation.trials import run_trials

__all__ = [
    "ablate", "judge_task", "lint_prompt", "pass_hat_k", "run_trials", "self_test", "sign_test",
    "success_interval", "trials_needed", "wilson",
]
