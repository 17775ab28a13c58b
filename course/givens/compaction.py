"""Chapter 04's givens: the summary message a compaction leaves in place of old turns, and the
study guide's rule-based summary (every call made and every error, verbatim).

A summary is one user message that starts with `SUMMARY_HEADER`, holds the summary text and,
when the transcript was backed up first, a list of the backups under `BACKUPS_HEADING`.
Lab 04 gives `rule_based_summary` to the student's `compact`; the answers
(`solutions.compaction`) re-export everything here.
"""
from __future__ import annotations

import json

SUMMARY_HEADER = "[Compacted history: this message replaces earlier turns of the conversation]"
BACKUPS_HEADING = ("Full transcripts saved before compacting (JSONL, one message per line; "
                   "open them with read_file):")
RULE_TITLE = "Earlier progress:"


def text_of(content) -> str | None:
    """The text of a message's content: a string, or a list of text parts joined (other
    agents send those); None for anything else (an image part, a malformed content)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text"
                                         and isinstance(p.get("text"), str) for p in content):
        return "".join(p["text"] for p in content)
    return None


def is_summary(message: dict) -> bool:
    """True for the user message a compaction left in place of earlier turns."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    content = message.get("content")
    return isinstance(content, str) and content.startswith(SUMMARY_HEADER)


def summary_parts(content: str) -> tuple[str, list[str]]:
    """(body, backup lines) of a summary message's content."""
    text = content[len(SUMMARY_HEADER):] if content.startswith(SUMMARY_HEADER) else content
    body, _, backups = text.partition(BACKUPS_HEADING)
    return body.strip("\n"), [line for line in backups.splitlines() if line.startswith("- ")]


def summary_message(text: str, backups: list[str]) -> dict:
    content = f"{SUMMARY_HEADER}\n{text.strip()}"
    if backups:
        content += "\n\n" + BACKUPS_HEADING + "\n" + "\n".join(backups)
    return {"role": "user", "content": content}


def _error_of(content) -> str | None:
    """The `error` field of a JSON tool result, verbatim (what the study guide's rule keeps)."""
    content = text_of(content)  # other agents send results as a list of text parts
    if content is None or "error" not in content:
        return None
    try:
        data = json.loads(content)
    except ValueError:
        return None
    if isinstance(data, dict) and "error" in data:
        return str(data["error"])
    return None


def rule_based_summary(messages: list[dict]) -> str:
    """The study guide's rule: record every call made and every error verbatim. Nothing else.

    Earlier summaries found among `messages` are carried forward first, so chained compactions
    keep what the first one recorded. It never records *why*: conclusions are lost.
    """
    carried: list[str] = []
    facts: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            for call in message.get("tool_calls") or ():
                fn = call.get("function") if isinstance(call, dict) else None
                fn = fn if isinstance(fn, dict) else {}  # a malformed call is still recorded
                facts.append(f"called {fn.get('name')} {fn.get('arguments')}")
        elif role == "tool":
            error = _error_of(message.get("content"))
            if error is not None:
                facts.append(error)
        elif is_summary(message):
            body, _ = summary_parts(message["content"])
            body = body.removeprefix(RULE_TITLE).strip("\n")
            if body:
                carried.append(body)
    lines = carried + [f"- {fact}" for fact in facts]
    return RULE_TITLE + ("\n" + "\n".join(lines) if lines else " (no calls or errors yet)")
