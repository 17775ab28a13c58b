"""Pairing: every tool call answered by exactly one result, before any other message.

`check_pairing` scans a transcript once and reports the first place where calls and results do
not pair up, with the same rules a provider enforces (it answers HTTP 400 otherwise).
"""
from __future__ import annotations

from dataclasses import dataclass

ROLES = ("system", "developer", "user", "assistant", "tool")
KNOWN_ROLES = frozenset(ROLES)


@dataclass(frozen=True)
class Pairing:
    """The checker's verdict: ok, or the first problem (message index, kind, reason).

    kind               index points at
    orphan_result      a tool result that answers no open call
    missing_result     the assistant message whose call never gets a result
    late_result        a result that arrives after some other message came between
    duplicate_result   a second result for a call that was answered already
    duplicate_id       an assistant message that gives two of its calls the same id
    reused_id          an assistant message that reuses an id from an earlier turn
    malformed          a message or call that is not shaped like one (no role, no id...)
    """
    ok: bool
    index: int | None = None
    kind: str | None = None
    reason: str = "pairing intact"
    call_id: str | None = None

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return self.reason if self.ok else f"message {self.index}: {self.reason}"


def _problem(index: int, kind: str, reason: str, call_id: str | None = None) -> Pairing:
    return Pairing(False, index, kind, reason, call_id)


def _role_of(message) -> str | None:
    return message.get("role") if isinstance(message, dict) else None


def _unanswered(messages: list, at: int, open_calls: dict[str, int]) -> Pairing:
    """The problem when calls are still open at message `at` (or at the end): missing or late."""
    call_id, caller = next(iter(open_calls.items()))
    # Only on this error path do we look ahead: is the result there, just in the wrong place?
    for j in range(at + 1, len(messages)):
        message = messages[j]
        if _role_of(message) == "tool" and message.get("tool_call_id") == call_id:
            return _problem(j, "late_result",
                            f"result for call {call_id!r} (made at message {caller}) comes after "
                            f"message {at} ({_role_of(messages[at])}); a result must follow its "
                            f"call before any other message", call_id)
    where = (f"before message {at} ({_role_of(messages[at])})" if at < len(messages)
             else "before the transcript ends")
    ids = ", ".join(repr(i) for i in open_calls)
    calls = "call" if len(open_calls) == 1 else "calls"
    return _problem(caller, "missing_result", f"{calls} {ids} made here never got a result {where}",
                    call_id)


def _earlier(messages: list, before: int, call_id: str, role: str) -> int | None:
    """Index of the last message before `before` that made (assistant) or answered (tool) call_id.
    Used only to word an error, so the fast path keeps no per-id positions."""
    for j in range(before - 1, -1, -1):
        m = messages[j]
        if _role_of(m) != role:
            continue
        if role == "tool" and m.get("tool_call_id") == call_id:
            return j
        if role == "assistant" and any(isinstance(c, dict) and c.get("id") == call_id
                                       for c in m.get("tool_calls") or ()):
            return j
    return None


def check_pairing(messages: list) -> Pairing:
    """Scan once, in order, and report the first place where calls and results do not pair up.

    Rules (the ones providers enforce): every tool result answers a call of the assistant
    message right before its group of results; every call gets exactly one result before any
    other message; call ids are unique in one message and across the whole transcript.
    """
    if not isinstance(messages, list):
        raise TypeError(f"check_pairing expects a list of message dicts, got {type(messages).__name__}")
    open_calls: dict[str, int] = {}  # calls still waiting for a result -> their message index
    used: set[str] = set()           # every call id made so far
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                return _problem(i, "malformed", "tool result without a string tool_call_id")
            if call_id in open_calls:
                del open_calls[call_id]
                continue
            if call_id in used:  # made earlier and no longer open: it was answered already
                return _problem(i, "duplicate_result",
                                f"second result for call {call_id!r}, which was answered at "
                                f"message {_earlier(messages, i, call_id, 'tool')}", call_id)
            return _problem(i, "orphan_result",
                            f"tool result for call {call_id!r}, but no call with that id is "
                            f"waiting for a result", call_id)
        if role not in KNOWN_ROLES:
            return _problem(i, "malformed", f"not a message with a known role ({', '.join(ROLES)}): "
                                            f"{str(message)[:80]}")
        if open_calls:
            return _unanswered(messages, i, open_calls)
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls is None:
            continue
        if not isinstance(calls, list) or not calls:
            return _problem(i, "malformed", "tool_calls must be a non-empty list (leave the key "
                                            "out when there are no calls)")
        for call in calls:
            call_id = call.get("id") if isinstance(call, dict) else None
            if not isinstance(call_id, str):
                return _problem(i, "malformed", f"tool call without a string id: {str(call)[:80]}")
            if call_id in open_calls:
                return _problem(i, "duplicate_id", f"two calls in this message share the id "
                                                   f"{call_id!r}", call_id)
            if call_id in used:
                return _problem(i, "reused_id", f"call id {call_id!r} was already used at message "
                                                f"{_earlier(messages, i, call_id, 'assistant')}; "
                                                f"ids must be unique in a transcript", call_id)
            open_calls[call_id] = i
            used.add(call_id)
    if open_calls:
        return _unanswered(messages, len(messages), open_calls)
    return Pairing(True)
