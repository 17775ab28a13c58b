"""Turns: one non-tool message plus the tool results that answer it. History is kept or
dropped a whole turn at a time, so a call never loses its result."""
from __future__ import annotations

from solutions.compaction.pairing import KNOWN_ROLES, ROLES, role_of
from solutions.compaction.summaries import is_summary


def split_turns(messages: list[dict]) -> list[list[dict]]:
    """Group messages into turns: each non-tool message starts one, tool results join it."""
    if not isinstance(messages, list):
        raise ValueError(f"split_turns expects a list of message dicts, got {type(messages).__name__}")
    turns: list[list[dict]] = []
    for i, message in enumerate(messages):
        role = role_of(message)
        if role not in KNOWN_ROLES:
            raise ValueError(f"message {i} is not a message with a known role ({', '.join(ROLES)}); "
                             f"check_pairing(messages) says more")
        if role == "tool":
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
        if role_of(messages[i]) != "tool":
            started += 1
            if started == keep_turns:
                return i
    return 0


def _opens(message) -> bool:
    """Messages that may come before the task: instructions, or an assistant speaking without
    calls (a product's greeting, "Hi! How can I help?")."""
    role = role_of(message)
    return role in ("system", "developer") or (role == "assistant" and not message.get("tool_calls"))


def split_head(messages: list[dict]) -> tuple[list[dict], list[dict]]:
    """(head, rest): the head is what compaction keeps verbatim, the instructions and the task.

    The head is everything up to and including the first user message, when only system or
    developer messages and assistant messages without calls come before it: an assistant that
    speaks first ("Hi! How can I help?") stays, since the task may answer it ("the second
    one"). When the assistant makes calls before any user message, or there is no user
    message, the task is in the instructions and the head is the leading system and developer
    messages. A summary is never the task (chained compactions keep the same head).
    """
    i = 0
    while i < len(messages) and _opens(messages[i]):
        i += 1
    if i < len(messages) and role_of(messages[i]) == "user" and not is_summary(messages[i]):
        return messages[:i + 1], messages[i + 1:]
    i = 0
    while i < len(messages) and role_of(messages[i]) in ("system", "developer"):
        i += 1
    return messages[:i], messages[i:]
