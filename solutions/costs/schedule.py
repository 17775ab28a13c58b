"""Compaction at a threshold: what each step sends, and what it shares with the step before,
when an agent compacts only once a request would grow past a threshold (lab 05's second
exercise)."""
from __future__ import annotations

from typing import NamedTuple

from solutions.costs.prices import check_tokens
from solutions.costs.run import Run, as_run


class Schedule(NamedTuple):
    prompt_tokens: list[int]   # sent at each step
    shared_tokens: list[int]   # prefix shared with the previous request (cacheable)
    compacted_at: list[int]    # steps (1-based) that compacted before sending
    uncompacted: list[int]     # what each compacting step would have sent without compacting


def compaction_schedule(run, threshold: int) -> Schedule:
    """Compact only when a request would exceed `threshold` tokens; append in between.

    `run` is a Run or a dict of its fields. At a compacting step the older history becomes a
    summary and the last `keep_recent` steps stay verbatim; only the fixed prefix is shared
    with the previous request. Between compactions history is only appended, so each request
    shares all of the previous one.
    """
    run = as_run(run)
    threshold = check_tokens(threshold, "threshold")
    compacted_size = run.prefix_tokens + run.summary_tokens + run.step_tokens * run.keep_recent
    if compacted_size > threshold:
        raise ValueError(
            f"threshold {threshold:,} is below what a compaction leaves behind: prefix "
            f"{run.prefix_tokens:,} + summary {run.summary_tokens:,} + {run.keep_recent} recent "
            f"steps x {run.step_tokens:,} = {compacted_size:,} tokens")
    prompts, shared, compacted, uncompacted = [], [], [], []
    history, summary, previous = 0, 0, 0
    for step in range(1, run.steps + 1):
        size = run.prefix_tokens + summary + run.step_tokens * history
        if size > threshold:
            uncompacted.append(size)
            summary, history = run.summary_tokens, run.keep_recent
            size = compacted_size
            shared.append(min(run.prefix_tokens, size))
            compacted.append(step)
        else:
            shared.append(previous)
        prompts.append(size)
        previous = size
        history += 1
    return Schedule(prompts, shared, compacted, uncompacted)


def default_threshold(run: Run) -> int:
    """Compact once the history has grown to twice what a compaction keeps."""
    return run.prefix_tokens + run.summary_tokens + 2 * run.step_tokens * run.keep_recent
