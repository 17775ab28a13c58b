"""The shape of an agent run in tokens, how a provider reports a shared prefix, and what each
step sends under the study guide's two histories (kept whole, or compacted every step).

No exercise of lab 05 is defined here, so the lab imports the study guide's run from it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from solutions.costs.billing import Request
from solutions.costs.prices import check_tokens, from_fields


# --------------------------------------------------------------------------- the run model

class Call(NamedTuple):
    """One model call of a run, in the order the calls are made, before any caching: what it
    sends and how much of it is the same as the call just before (a prefix, token for token)."""

    step: int
    prompt: int
    shared: int       # prefix shared with the previous call (0 for the first)
    completion: int
    kind: str = "agent"  # "agent", or "summary" for a compaction's summarising call


@dataclass(frozen=True)
class Run:
    """The shape of an agent run, in tokens (defaults: the study guide's third lab)."""

    prefix_tokens: int = 3000     # system prompt + tool definitions, fixed
    step_tokens: int = 1500       # what each step adds to the history
    steps: int = 40
    keep_recent: int = 8          # steps kept verbatim by a compaction
    summary_tokens: int = 800     # the summary that replaces older steps
    output_tokens: int = 0        # completion tokens per step (the seed leaves them out)
    summary_request_tokens: int = 200  # the instruction of a summarising call

    def __post_init__(self):
        for name in ("prefix_tokens", "step_tokens", "keep_recent", "summary_tokens",
                     "output_tokens", "summary_request_tokens"):
            check_tokens(getattr(self, name), name)
        if check_tokens(self.steps, "steps") < 1:
            raise ValueError("a run needs at least 1 step")


# The study guide's third lab, as plain data (lab 05 hands its functions this dict).
SEED_RUN_FIELDS = {"prefix_tokens": 3000, "step_tokens": 1500, "steps": 40, "keep_recent": 8,
                   "summary_tokens": 800}
SEED_RUN = Run(**SEED_RUN_FIELDS)
RUN_FIELDS = tuple(Run.__dataclass_fields__)


def as_run(run) -> Run:
    """`run` as a Run: a Run, or a plain dict of its fields (missing ones take the seed's)."""
    return from_fields(Run, run, RUN_FIELDS, kind="run", argument="run",
                       use=", ".join(RUN_FIELDS), accepted="a Run or a dict of its fields")


@dataclass(frozen=True)
class CacheRules:
    """Automatic caching, and how a provider reports a shared prefix: nothing below `minimum`,
    whole blocks only. Every prompt is cached as it comes, so every token not read from the
    cache is written to it (see `Breakpoints` for caching only where a request asks)."""

    minimum: int = 0
    block: int = 1

    def __post_init__(self):
        check_tokens(self.minimum, "minimum")
        if check_tokens(self.block, "block") < 1:
            raise ValueError("block must be at least 1 token")

    def cached(self, shared_prefix: int) -> int:
        blocks = (check_tokens(shared_prefix, "shared prefix") // self.block) * self.block
        return blocks if blocks >= self.minimum else 0

    def bill(self, calls: Sequence[Call], prefix_tokens: int = 0) -> list[Request]:
        """The billed requests of `calls`: each reads what it shares with the call before
        (as reported under these rules) and writes the rest of its prompt."""
        requests = []
        for call in calls:
            cached = self.cached(min(call.shared, call.prompt))
            requests.append(Request(call.step, call.prompt, cached, call.completion,
                                    call.prompt - cached, call.kind))
        return requests


EXACT = CacheRules()                       # the seed's idealisation: every shared token counts
OPENAI_RULES = CacheRules(minimum=1024, block=128)  # also the teaching model's rules
DEEPSEEK_RULES = CacheRules(minimum=64, block=64)   # DeepSeek's disk cache: 64-token units


def full_history_prompt(step: int, run: Run = SEED_RUN) -> int:
    """Tokens sent at `step` (1-based) when the whole history is kept."""
    return run.prefix_tokens + run.step_tokens * (step - 1)


def compacted_prompt(step: int, run: Run = SEED_RUN) -> int:
    """The study guide's compaction: past `keep_recent` steps, send prefix + summary + recent."""
    if step - 1 - run.keep_recent <= 0:
        return full_history_prompt(step, run)
    return run.prefix_tokens + run.summary_tokens + run.step_tokens * run.keep_recent


def append_only_shared(prompts: Sequence[int]) -> list[int]:
    """Shared prefix per step when history is only appended: all of the previous request."""
    shared = [0]
    for i in range(1, len(prompts)):
        if prompts[i] < prompts[i - 1]:
            raise ValueError(f"step {i + 1} sends fewer tokens than step {i}: that history was "
                             f"not append-only")
        shared.append(prompts[i - 1])
    return shared[:len(prompts)]


def prefix_only_shared(prompts: Sequence[int], prefix_tokens: int) -> list[int]:
    """Shared prefix per step when the history is rewritten every step: the fixed prefix."""
    return [0] + [min(prefix_tokens, p) for p in prompts[1:]]
