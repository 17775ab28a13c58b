"""Compaction: keep a long agent run inside its window without separating calls from results.

Truncation shortens one message; compaction shortens the history. The shape after compacting:

    head      the system prompt and the original task, kept verbatim
    summary   one user message that replaces the old turns
    recent    the last `keep_turns` turns, kept whole

A *turn* here is one non-tool message plus the tool results that answer it (so an assistant
message with three parallel calls and its three results is one turn). History is kept or
dropped a whole turn at a time, which is why a call never loses its result: a provider rejects
a request with an orphan result or an unanswered call (HTTP 400), and `check_pairing` finds
the same problems before the provider does.

Production pieces: a token-threshold trigger (`should_compact`, counting with Chapter 02's
`count_request_tokens`), a JSONL backup of the transcript before each compaction with a pointer
to it in the summary, a model-written summary requested cache-safely (`ModelSummarizer`), and
chained compactions that carry earlier summaries and backups forward (`replay` runs a recorded
transcript through them step by step).

Messages use the Chat Completions format: an assistant's `tool_calls` are
`{"id", "type": "function", "function": {"name", "arguments"}}`, answered by
`{"role": "tool", "tool_call_id", "content"}`.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from solutions.compaction.summaries import (BACKUPS_HEADING, COMPACTION_INSTRUCTION, RULE_TITLE,
                                            SUMMARY_HEADER, ModelSummarizer, is_summary,
                                            rule_based_summary, summary_message, summary_parts)
from solutions.tokens import count_request_tokens
from solutions.truncation import Workspace, offload

ROLES = ("system", "developer", "user", "assistant", "tool")
KNOWN_ROLES = frozenset(ROLES)
TRANSCRIPTS_DIR = ".agent/transcripts"

# ---------------------------------------------------------------------------- pairing


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


# ---------------------------------------------------------------------------- turns


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


# ---------------------------------------------------------------------------- transcripts


def transcript_jsonl(messages: list[dict]) -> str:
    return "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)


def save_transcript(messages: list[dict], path: str | os.PathLike) -> None:
    """Write JSONL atomically: the file is complete or absent, never half-written."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(transcript_jsonl(messages), encoding="utf-8")
    partial.replace(path)


def load_transcript(path: str | os.PathLike) -> list[dict]:
    messages = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}, line {n}: not valid JSON ({exc})") from None
            if not isinstance(message, dict):
                raise ValueError(f"{path}, line {n}: expected a JSON object (one message), "
                                 f"got {type(message).__name__}")
            messages.append(message)
    return messages


def backup_transcript(messages: list[dict], workspace: Workspace,
                      directory: str = TRANSCRIPTS_DIR) -> str:
    """Save the whole transcript inside the workspace; return the path read_file can open."""
    return offload(transcript_jsonl(messages), workspace, directory, prefix="transcript",
                   suffix=".jsonl")


# ---------------------------------------------------------------------------- compaction


def compact(messages: list[dict], keep_turns: int = 2,
            summarize: Callable[[list[dict]], str] = rule_based_summary,
            workspace: Workspace | None = None) -> list[dict]:
    """Head + one summary of the old turns + the last `keep_turns` turns, whole.

    `summarize` receives the conversation prefix that is being replaced (head + old turns,
    unchanged) and returns the summary text. With a `workspace`, the full transcript is backed
    up there first and the summary points to the backup. Returns a new list; `messages` is not
    modified, and a transcript that is already broken is refused rather than compacted.
    """
    if not isinstance(keep_turns, int) or keep_turns < 0:
        raise ValueError(f"keep_turns must be a non-negative integer, got {keep_turns!r}")
    verdict = check_pairing(messages)
    if not verdict:
        raise ValueError(f"refusing to compact a transcript whose pairing is already broken: {verdict}")
    head, rest = split_head(messages)
    start = recent_start(rest, keep_turns)  # whole turns only: never between a call and its result
    old, recent = rest[:start], rest[start:]
    earlier = [m for m in old if is_summary(m)]
    if len(earlier) == len(old):  # nothing new to fold in
        return list(messages)
    backups = [line for m in earlier for line in summary_parts(m["content"])[1]]
    if workspace is not None:
        path = backup_transcript(messages, workspace)
        backups.append(f"- {path} ({len(messages)} messages)")
    text = summarize(head + old)
    return head + [summary_message(text, backups)] + recent


def drop_oldest_messages(messages: list[dict], keep_messages: int) -> list[dict]:
    """The naive sliding window, for contrast: head + the last N *messages*, cut anywhere.

    It often keeps a tool result whose call was dropped; check_pairing (and the provider)
    reject the result.
    """
    head, rest = split_head(messages)
    return head + rest[max(len(rest) - keep_messages, 0):]


# ---------------------------------------------------------------------------- when to compact


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
