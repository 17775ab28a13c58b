"""Pairing: every tool call answered by exactly one result, before any other message.

`check_pairing` scans a transcript once and reports the first place where calls and results do
not pair up, with the same rules a provider enforces (it answers HTTP 400 otherwise).
`unique_call_ids` repairs the one problem other agents' transcripts often have: a later turn
reusing an earlier call id (some OpenAI runs and vLLM-served models do).
"""
from __future__ import annotations

import copy
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
        if self.ok or self.index is None:
            return self.reason
        return f"message {self.index}: {self.reason}"


def _problem(index: int, kind: str, reason: str, call_id: str | None = None) -> Pairing:
    return Pairing(False, index, kind, reason, call_id)


def role_of(message) -> str | None:
    """The message's role when it is a string (anything else is no role: JSON may hold a list)."""
    role = message.get("role") if isinstance(message, dict) else None
    return role if isinstance(role, str) else None


def _unanswered(messages: list, at: int, open_calls: dict[str, int]) -> Pairing:
    """The problem when calls are still open at message `at` (or at the end): missing or late."""
    call_id, caller = next(iter(open_calls.items()))
    # Only on this error path do we look ahead: is the result there, just in the wrong place?
    for j in range(at + 1, len(messages)):
        message = messages[j]
        if role_of(message) == "tool" and message.get("tool_call_id") == call_id:
            return _problem(j, "late_result",
                            f"result for call {call_id!r} (made at message {caller}) comes after "
                            f"message {at} ({role_of(messages[at])}); a result must follow its "
                            f"call before any other message", call_id)
    where = (f"before message {at} ({role_of(messages[at])})" if at < len(messages)
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
        if role_of(m) != role:
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
        return Pairing(False, None, "malformed", f"check_pairing expects a list of message dicts, "
                                                 f"got {type(messages).__name__}")
    open_calls: dict[str, int] = {}  # calls still waiting for a result -> their message index
    used: set[str] = set()           # every call id made so far
    for i, message in enumerate(messages):
        role = role_of(message)
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
                                                f"ids must be unique in a transcript "
                                                f"(unique_call_ids(messages) renames reused ids)",
                                call_id)
            open_calls[call_id] = i
            used.add(call_id)
    if open_calls:
        return _unanswered(messages, len(messages), open_calls)
    return Pairing(True)


def _call_ids(message) -> list:
    """The ids of an assistant message's calls, whatever their type (malformed ones included)."""
    calls = message.get("tool_calls") if role_of(message) == "assistant" else None
    if not isinstance(calls, list):
        return []
    return [call.get("id") for call in calls if isinstance(call, dict)]


def unique_call_ids(messages: list) -> list:
    """A copy of `messages` in which no later turn reuses an earlier turn's tool-call id.

    Some agents' transcripts reuse an id in a later turn (a provider refuses the transcript;
    code that keys results by id mixes the two calls up). Each reused id is renamed, in the
    call and in the results that answer it: the tool results right after that assistant
    message. The new id is the old one plus `-2`, `-3`... (the first suffix no message of the
    transcript uses), so the same input always gives the same output, and pairing is kept.
    Ids that are already unique, two calls of one message sharing an id (which result answers
    which cannot be known), and malformed messages are left as they are: `check_pairing`
    reports those. The input is not modified; an already-unique transcript comes back equal.
    """
    if not isinstance(messages, list):
        raise ValueError(f"unique_call_ids expects a list of message dicts, got "
                         f"{type(messages).__name__}")
    taken = {i for m in messages for i in _call_ids(m) if isinstance(i, str)}
    taken |= {m.get("tool_call_id") for m in messages
              if role_of(m) == "tool" and isinstance(m.get("tool_call_id"), str)}
    out = copy.deepcopy(messages)
    used: set[str] = set()          # ids of calls in earlier turns
    renamed: dict[str, str] = {}    # the current turn's renamings, old id -> new id
    for message in out:
        role = role_of(message)
        if role == "tool":
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str) and call_id in renamed:
                message["tool_call_id"] = renamed[call_id]
            continue
        renamed = {}
        ids = [i for i in _call_ids(message) if isinstance(i, str)]
        for call in message["tool_calls"] if ids else ():
            old = call.get("id") if isinstance(call, dict) else None
            if not isinstance(old, str) or old not in used:
                continue
            if old not in renamed:
                n = 2
                while f"{old}-{n}" in taken:
                    n += 1
                renamed[old] = f"{old}-{n}"
                taken.add(renamed[old])
            call["id"] = renamed[old]
        used.update(ids)
    return out
