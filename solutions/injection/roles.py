"""Instruction–data separation: untrusted text never sits in a privileged role.

The chat template's roles are how a model tells who is speaking. The system (or developer)
message is the operator; a user message is the person the agent works for; a tool message is
material the agent fetched. A harness that pastes a web page or an attachment into the system
prompt or the user's message (the textbook's "don't concatenate messages by hand") erases that
difference: the model reads the outsider's words with the authority of the role they sit in.

`separate_roles` repairs such a history. Untrusted text is what `fence` wrapped
(`<external_content source="...">...</external_content>`). Every fenced span found in a
system, developer or user message is cut out of it, a pointer (`[moved to <call id>]`) is
left in its place, and the span is delivered the way fetched material is delivered: an
assistant message that calls `read_external` (one call per span) followed at once by the
matching tool results. The pairs are inserted right after the message the spans came from,
or, if that message sits inside an unanswered round of tool calls, after the round's results,
so every call keeps its result next to it. The input list is not changed.
"""
from __future__ import annotations

import hashlib
import json

from course.givens.injection import EXTERNAL_TOOL  # re-exported
from solutions.injection.fence import FENCED

PRIVILEGED = ("system", "developer", "user")


def _text_parts(content):
    """The content as a string, or None when it is not plain text (left alone)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text"
                                         for p in content):
        return "".join(p.get("text", "") for p in content)
    return None


def _call_id(index: int, n: int, span: str, taken: set[str]) -> str:
    digest = hashlib.sha256(f"{index}:{n}:{span}".encode()).hexdigest()
    length = 12
    while f"ext_{digest[:length]}" in taken:
        length += 1
    call_id = f"ext_{digest[:length]}"
    taken.add(call_id)
    return call_id


def _open_before(messages: list) -> list[set]:
    """For each message, the ids of the calls still waiting for results just before it (one
    pass; a set is replaced, never changed, so each entry stays as it was)."""
    states, open_calls = [], set()
    for message in messages:
        states.append(open_calls)
        role = message.get("role") if isinstance(message, dict) else None
        if role == "assistant" and message.get("tool_calls"):
            open_calls = {c.get("id") for c in message["tool_calls"] if isinstance(c, dict)}
        elif role == "tool":
            open_calls = open_calls - {message.get("tool_call_id")}
        else:
            open_calls = set()
    return states


def _insertion_point(messages: list, index: int, waiting: set) -> int:
    """Just after messages[index], and after any tool results that still answer `waiting`."""
    waiting = set(waiting)
    at = index + 1
    while at < len(messages) and waiting and messages[at].get("role") == "tool":
        waiting.discard(messages[at].get("tool_call_id"))
        at += 1
    return at


def separate_roles(messages: list[dict]) -> list[dict]:
    """A new history where no fenced (untrusted) text is left in a system, developer or user
    message: each span is delivered as a `read_external` call and its tool result instead."""
    if not isinstance(messages, list):
        raise TypeError(f"messages must be a list, not {type(messages).__name__}")
    taken = {c.get("id") for m in messages if isinstance(m, dict)
             for c in (m.get("tool_calls") or []) if isinstance(c, dict)}
    out = [dict(m) for m in messages]
    inserts: dict[int, list[dict]] = {}
    waiting = _open_before(messages)
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in PRIVILEGED:
            continue
        text = _text_parts(message.get("content"))
        if text is None or not FENCED.search(text):
            continue
        calls, results, kept, last = [], [], [], 0
        for n, match in enumerate(FENCED.finditer(text)):
            call_id = _call_id(i, n, match.group(0), taken)
            kept.append(text[last:match.start()])
            kept.append(f"[moved to {call_id}]")
            last = match.end()
            calls.append({"id": call_id, "type": "function", "function": {
                "name": EXTERNAL_TOOL, "arguments": json.dumps({"source": match.group(1)})}})
            results.append({"role": "tool", "tool_call_id": call_id, "content": match.group(0)})
        kept.append(text[last:])
        out[i]["content"] = "".join(kept)
        at = _insertion_point(messages, i, waiting[i])
        inserts.setdefault(at, []).extend(
            [{"role": "assistant", "content": None, "tool_calls": calls}] + results)
    result = []
    for i, message in enumerate(out):
        result.extend(inserts.get(i, ()))
        result.append(message)
    result.extend(inserts.get(len(out), ()))
    return result
