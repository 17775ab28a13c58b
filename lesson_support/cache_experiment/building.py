"""The requests of a scripted run under each strategy: what keeps the prefix stable (append
only) and what breaks it (a timestamp, reordered tools, unstable JSON keys, a sliding window,
compaction)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

from lesson_support.cache_experiment.script import (START_TIME, SYSTEM_PROMPT, TASK, TOOLS, ScriptStep,
                                      call_messages, shuffled, scripted_summary)
from solutions.tokens import count_request_tokens

STRATEGIES = {
    "append-only": "fixed system prompt and tools, history only appended",
    "timestamp at the end": "the current time sent in a last user message, not kept",
    "timestamp in system prompt": "the system prompt starts with the current time",
    "tools reordered": "tool definitions shuffled on every call",
    "unstable JSON keys": "tool-call arguments re-serialised with keys in random order",
    "sliding window": "only the last few steps of history are sent",
    "compact every step": "older steps replaced by a new summary on every call",
    "compact at threshold": "a summary only when the request would exceed a token threshold",
}
SLIDING_WINDOW_STEPS = 4
KEEP_RECENT_STEPS = 3
COMPACT_THRESHOLD_TOKENS = 4_000


@dataclass
class RunState:
    """What a strategy remembers between calls (only compaction at a threshold needs any)."""

    summary_upto: int = 0          # steps folded into the summary so far
    last_tools: list | None = None


def build_request(strategy: str, k: int, steps: list[ScriptStep], state: RunState | None = None,
                  session: str = "") -> tuple[list[dict], list[dict]]:
    """(messages, tools) for call number k (0-based), which has steps[:k] as its history."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of: {', '.join(STRATEGIES)}")
    state = state or RunState()
    clock = (START_TIME + timedelta(seconds=7.3 * k)).isoformat(sep=" ")
    system = f"Session: {session or strategy}.\n" + SYSTEM_PROMPT
    if strategy == "timestamp in system prompt":
        system = f"Session: {session or strategy}.\nCurrent time: {clock}\n" + SYSTEM_PROMPT
    tools = TOOLS
    if strategy == "tools reordered":
        tools = shuffled(TOOLS, f"tools-{k}")
        while k and tools == state.last_tools:  # a reorder that changes nothing teaches nothing
            tools = shuffled(tools, f"tools-{k}-again")
        state.last_tools = tools

    def arguments(step: ScriptStep) -> str:
        if strategy == "unstable JSON keys":
            keys = shuffled(list(step.arguments), f"keys-{k}-{step.call_id}")
            return json.dumps({key: step.arguments[key] for key in keys}, ensure_ascii=False)
        return json.dumps(step.arguments, ensure_ascii=False)

    head = [{"role": "system", "content": system}, {"role": "user", "content": TASK}]
    history = steps[:k]
    summary_of: list[ScriptStep] = []
    if strategy == "sliding window":
        history = history[-SLIDING_WINDOW_STEPS:]
    elif strategy == "compact every step" and len(history) > KEEP_RECENT_STEPS:
        summary_of, history = history[:-KEEP_RECENT_STEPS], history[-KEEP_RECENT_STEPS:]
    elif strategy == "compact at threshold":
        summary_of, history = history[:state.summary_upto], history[state.summary_upto:]
    messages = list(head)
    if summary_of:
        messages.append({"role": "user", "content": scripted_summary(summary_of)})
    for step in history:
        messages += call_messages(step, arguments(step))
    if strategy == "compact at threshold" and len(history) > KEEP_RECENT_STEPS \
            and count_request_tokens(messages, tools) > COMPACT_THRESHOLD_TOKENS:
        state.summary_upto = k - KEEP_RECENT_STEPS
        return build_request(strategy, k, steps, state, session)
    if strategy == "timestamp at the end":
        messages.append({"role": "user", "content": f"(Current time: {clock}) Continue."})
    return messages, tools
