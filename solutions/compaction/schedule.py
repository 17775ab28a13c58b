"""When to compact: a token-threshold trigger, and the replay of a recorded run through it
(the saw-tooth of context size over the steps)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from solutions.compaction.turns import split_head, split_turns
from solutions.tokens import count_request_tokens


def should_compact(messages: list[dict], threshold_tokens: int,
                   tools: list[dict] | None = None) -> bool:
    """Compact only when the next request would exceed the threshold, not at every step:
    each compaction rewrites the prefix and throws away the provider's prompt cache."""
    return count_request_tokens(messages, tools) > threshold_tokens


@dataclass
class Replay:
    sizes: list[int]          # prompt tokens of the context after each step
    compacted_at: list[int]   # the steps at which the context was compacted
    messages: list[dict]      # the context at the end of the run
    peaks: list[int]          # the size each compaction started from (above the threshold)

    def sawtooth(self) -> tuple[list[int], list[int]]:
        return sawtooth_points(self.sizes, self.compacted_at, self.peaks)


def sawtooth_points(sizes: list[int], compacted_at: list[int],
                    peaks: list[int]) -> tuple[list[int], list[int]]:
    """(steps, tokens) for a line chart of a replay: at each compaction the line climbs to the
    size that triggered it, then drops straight down to the size after it."""
    peak_at = dict(zip(compacted_at, peaks))
    steps, tokens = [], []
    for step, size in enumerate(sizes):
        if step in peak_at:
            steps.append(step)
            tokens.append(peak_at[step])
        steps.append(step)
        tokens.append(size)
    return steps, tokens


def replay(run: list[dict], threshold_tokens: float,
           shrink: Callable[[list[dict]], list[dict]],
           tools: list[dict] | None = None) -> Replay:
    """Replay a recorded run turn by turn, shrinking the context whenever it passes the threshold.

    `shrink` is e.g. `functools.partial(compact, keep_turns=4)`. The sizes make the
    saw-tooth: the context grows step by step and drops at each compaction.
    """
    # A request's count is the sum of its messages' shares (the template renders each message
    # on its own), so each message is tokenised once, not once per step.
    empty = count_request_tokens([])
    base = count_request_tokens([], tools)
    shares: dict[int, tuple[dict, int]] = {}  # id -> (message, tokens); holding it keeps the id unique

    def size(messages: list[dict]) -> int:
        total = base
        for m in messages:
            if id(m) not in shares:
                shares[id(m)] = (m, count_request_tokens([m]) - empty)
            total += shares[id(m)][1]
        return total

    head, rest = split_head(run)
    context, sizes, compacted_at, peaks = list(head), [], [], []
    for step, turn in enumerate(split_turns(rest)):
        context = context + turn
        current = size(context)
        if current > threshold_tokens:
            smaller = shrink(context)
            if smaller != context:
                context = smaller
                compacted_at.append(step)
                peaks.append(current)
        sizes.append(size(context))
    return Replay(sizes, compacted_at, context, peaks)
