"""Layer 4, archival per-turn summaries: each old turn becomes one record in a log (like
`git log`, one entry per commit), never one squashed paragraph. Records are written once and
never rewritten, so the log only grows at its end.

A record keeps what the textbook's retention priorities say to keep: the assistant's own words
(decisions and reasons, todos), each call with its arguments, whether it worked, the lines
that say why a failure failed, what a write changed, and the identifiers of the turn. Every
kept identifier is whole (a path or a hash is never cut in the middle: half an identifier is a
wrong one): a text cut at its limit keeps an identifier whole or leaves it out whole, and the
identifiers it left out come first in the record's "ids:" list (at most IDS_PER_TURN).
"""
from __future__ import annotations

import json
import re

from course.identifiers import cut_whole, identifiers
from course.tracing import tag
from course.givens.compaction import text_of

ARCHIVE_HEADER = ("[Archived turns: one record per turn, oldest first. Full outputs are in the "
                  "files they point to; the full transcript is at {transcript}]")
TRANSCRIPT_PATH = ".agent/transcript.jsonl"
TEXT_CHARS = 400
IDS_PER_TURN = 8
EXIT = re.compile(r"\[exit code: (\d+)\]")
CAUSE = re.compile(r"error|failed|exception|refused|denied|traceback|cannot|not found", re.I)


def _args(arguments: str) -> str:
    try:
        data = json.loads(arguments)
    except (ValueError, TypeError):
        return arguments
    if not isinstance(data, dict):
        return arguments
    shown = {k: (v if not isinstance(v, str) or len(v) <= 160 or k not in ("content",)
                 else f"<{len(v):,} characters>") for k, v in data.items()}
    return json.dumps(shown, ensure_ascii=False)


def _cut_words(text: str, limit: int) -> str:
    """At most `limit` characters, then " [...]" when shortened. Every kept identifier is whole:
    the cut falls between words, or in a long run without spaces (a path over the limit, a line
    of Chinese) where it splits no identifier; one that does not fit is left out whole."""
    return cut_whole(text, limit, " [...]")


def result_outcome(content: str) -> str:
    lines = content.splitlines() or [""]
    code = EXIT.findall(content)
    failed = (code and code[-1] != "0") or bool(re.match(r"\s*(error|traceback|failed)", content, re.I))
    if failed:
        causes = [line.strip() for line in lines if CAUSE.search(line) and not EXIT.search(line)]
        why = " | ".join(causes[:3]) or lines[0].strip()
        return f"FAILED{f' (exit {code[-1]})' if code else ''}: {why}"
    first = lines[0].strip()
    return f"ok: {_cut_words(first, 160)}" + (f" ({len(lines):,} lines)" if len(lines) > 1 else "")


def check_one_turn(turn) -> None:
    """Raise ValueError, naming the message, unless `turn` is one turn: a non-tool message
    dict, then only the tool results that answer it (as split_turns groups them)."""
    if not isinstance(turn, list) or not turn:
        raise ValueError("a turn is a non-empty list: a message, then the tool results that "
                         "answer it")
    for i, message in enumerate(turn):
        role = message.get("role") if isinstance(message, dict) else None
        if not isinstance(message, dict):
            raise ValueError(f"turn[{i}] is a {type(message).__name__}, not a message")
        if i == 0 and role == "tool":
            raise ValueError("turn[0] is a tool result: a turn starts with the message it answers")
        if i > 0 and role != "tool":
            raise ValueError(f"turn[{i}] is a {role!r} message, the start of another turn: "
                             f"archive one turn at a time (split_turns groups them)")
    calls = turn[0].get("tool_calls")
    if calls is not None and not (isinstance(calls, list) and all(
            isinstance(c, dict) and isinstance(c.get("function", {}), dict) for c in calls)):
        raise ValueError("turn[0].tool_calls is not a list of calls (dicts whose function is a dict)")


def archive_turn(turn: list[dict]) -> str:
    """One record (a line of text) for one turn: a non-tool message and the results that answer
    it. Every kept identifier is whole: each identifier of the record is one of the turn's.
    Anything else (several turns, a turn that starts with a result) is refused with a
    ValueError rather than archived in part: a message left out would be lost silently."""
    check_one_turn(turn)
    first = turn[0]
    role = first.get("role")
    parts = []
    text = text_of(first.get("content")) or ""
    if text:
        parts.append(f"{role}: {_cut_words(' '.join(text.split()), TEXT_CHARS)}")
    results = {m.get("tool_call_id"): text_of(m.get("content")) or "" for m in turn[1:]}
    for call in first.get("tool_calls") or ():
        fn = call.get("function") or {}
        outcome = result_outcome(str(results.get(call.get("id"), "(no result)")))
        parts.append(f"{fn.get('name')} {_args(fn.get('arguments') or '')} -> {outcome}")
    record = "; ".join(parts) or f"{role}: (empty)"
    seen = set(identifiers(record))
    extra = []
    for content in [text, *results.values()]:  # the message's own first: a cut left them out
        for ident in identifiers(str(content)):
            if ident not in seen and ident not in extra:
                extra.append(ident)
    if extra:
        record += "; ids: " + ", ".join(extra[:IDS_PER_TURN])
    return "- " + record


def archive_message(records: list[str], transcript: str = TRANSCRIPT_PATH) -> dict:
    """The one user message that holds the log of archived turns; a trace counts it as the
    context's summary part (course.tracing.tag), not as history."""
    return tag("summary", {"role": "user", "content": ARCHIVE_HEADER.format(transcript=transcript)
                           + "\n" + "\n".join(records)})


def is_archive(message: dict) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, str) and content.startswith(ARCHIVE_HEADER.split("{")[0])
