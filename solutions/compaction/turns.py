"""Turns: one non-tool message plus the tool results that answer it. History is kept or
dropped a whole turn at a time, so a call never loses its result."""
from __future__ import annotations

from solutions.compaction.pairing import _role_of
from solutions.compaction.summaries import is_summary


def split_turns(messages: list[dict]) -> list[list[dict]]:
    """Group messages into turns: each non-tool message starts one, tool results join it."""
    turns: list[list[dict]] = []
    for i, message in enumerate(messages):
        if _role_of(message) == "tool":
            if not turns:
                raise ValueError(f"message {i} is a tool result with no message before it to "
                                 f"answer; check_pairing(messages) says more")
            turns[-1].append(message)
        else:
            turns.append([message])
    return turns


def recent_start(messages: list[dict], keep_turns: int) -> int:
    """Where the last `keep_turns` turns begin (turns exactly as split_turns groups them).

    Counted from the end, so compacting a long history does not regroup all of it.
    """
    if keep_turns == 0:
        return len(messages)
    started = 0
    for i in range(len(messages) - 1, -1, -1):
        if _role_of(messages[i]) != "tool":
            started += 1
            if started == keep_turns:
                return i
    return 0


def split_head(messages: list[dict]) -> tuple[list[dict], list[dict]]:
    """(head, rest): the head is the leading system/developer messages plus the first user task."""
    i = 0
    while i < len(messages) and _role_of(messages[i]) in ("system", "developer"):
        i += 1
    if i < len(messages) and _role_of(messages[i]) == "user" and not is_summary(messages[i]):
        i += 1
    return messages[:i], messages[i:]
