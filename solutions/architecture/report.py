"""A child's report contract (Chapter 15): what a sub-agent hands back to its parent.

The parent does not read the child's transcript; it reads a digest of it, bounded in tokens,
that says how the child ended (done, out of budget, failed, and why), what it found, and where
the details are: the `path:line` pointers its tool results held and the file its whole
transcript is saved in. The textbook's second section (21.6.5) calls this "share memory by
communicating": the parent gets a distilled answer and pointers, never the child's noise.
"""
from __future__ import annotations

import re

from course.givens.architecture import count_tokens

POINTER = re.compile(r"[\w.-]+(?:/[\w.-]+)+:\d+")
ELLIPSIS = "…"


def _text(message: dict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _fit(prefix: str, text: str, room: int) -> str:
    """`prefix + text`, cut (with an ellipsis) to the longest start that fits `room` tokens;
    "" when not even the prefix and the ellipsis fit."""
    whole = prefix + text
    if count_tokens(whole) <= room:
        return whole
    lo, hi = 0, len(text)  # the longest cut text[:k] + ELLIPSIS that fits
    while lo < hi:
        k = (lo + hi + 1) // 2
        if count_tokens(prefix + text[:k] + ELLIPSIS) <= room:
            lo = k
        else:
            hi = k - 1
    cut = prefix + text[:lo] + ELLIPSIS
    return cut if count_tokens(cut) <= room else ""


def digest(child_transcript, limit, where=None, status=None, reason=None):
    """A report of `child_transcript` (a Chat Completions message list) in at most `limit`
    tokens (count_tokens of the whole text). Its lines, in order:

        status: <status>[ (<reason>)]; <k> tool calls, <e> errors (singular for 1); transcript: <where>
        answer: <the child's last assistant text, cut to fit (to half the room the status
                 line leaves when there are pointers)>
        pointers: <path:line, ... found in its tool results, first seen first, as many as fit>

    `status` defaults to "done" when the transcript ends with an assistant message without tool
    calls, else "incomplete". The status line is never cut; a limit it does not fit in raises
    ValueError, as does a transcript that is not a list of messages with roles."""
    if not isinstance(child_transcript, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) for m in child_transcript):
        raise ValueError("child_transcript must be a list of messages, each a dict with a role")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive number of tokens, got {limit!r}")
    last = child_transcript[-1] if child_transcript else {}
    if status is None:
        status = "done" if last.get("role") == "assistant" and not last.get("tool_calls") \
            and _text(last) else "incomplete"
    calls = sum(len(m.get("tool_calls") or ()) for m in child_transcript)
    results = [_text(m) for m in child_transcript if m.get("role") == "tool"]
    errors = sum(r.lstrip().startswith('{"error"') for r in results)
    head = (f"status: {status}{f' ({reason})' if reason else ''}; {calls} tool call"
            f"{'s' * (calls != 1)}, {errors} error{'s' * (errors != 1)}; transcript: "
            f"{where or 'not saved'}")
    if count_tokens(head) > limit:
        raise ValueError(f"limit {limit} is too small: the status line alone is "
                         f"{count_tokens(head)} tokens")
    answers = [_text(m) for m in child_transcript if m.get("role") == "assistant" and _text(m)]
    answer = " ".join(answers[-1].split()) if answers and status == "done" else ""
    if status != "done" and answers:  # what the child had said when it stopped
        answer = "(unfinished) " + " ".join(answers[-1].split())
    pointers = list(dict.fromkeys(p for r in results for p in POINTER.findall(r)))
    report = head
    room = limit - count_tokens(report)
    line = _fit("\nanswer: ", answer, room // 2 if pointers else room) if answer else ""
    # count the joined text, not the parts: tokens do not add up across a join
    if line and count_tokens(report + line) <= limit:
        report += line
    if pointers:
        shown = []
        for p in pointers:
            candidate = report + "\npointers: " + ", ".join(shown + [p])
            if count_tokens(candidate) > limit:
                break
            shown.append(p)
        if shown:
            report += "\npointers: " + ", ".join(shown)
    return report
