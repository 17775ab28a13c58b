"""Where the bar goes: a user-role message at the end of the context (never the system prompt).

The system prompt is the start of every cached prefix: a bar there changes it each step and the
provider can reuse nothing. At the end, everything before the bar stays byte-identical. The
textbook (part 13) gives two ways to keep the end-of-context bar current:

    replace  drop the previous bar, append the new one: one bar in the context; the cache is
             reused up to where the old bar stood
    append   keep every earlier bar, append the new one (Claude Code's <system-reminder>): the
             prefix never changes, stale bars accumulate and the model must read the latest

Either way the bar never lands between an assistant message's tool calls and their results.

Which bars are the framework's? Not every message that starts with `<agent_status>`: a user can
paste a log that starts so, and a tool result can be a document someone wrote to look like one.
Anything in a message's text can be written by them, so the mark cannot be in the text. Nor is
it a field sent with the message: the API has none for it, strict servers refuse unknown fields,
and `name` is billed (the teaching model's template puts it in the header). So the framework
marks the message objects it creates: a bar is a `StatusMessage`, a `dict` that is sent as the
same JSON (the same bytes, the same tokens) and that no user or document can make. The mark
lives in this process: `dict(m)`, `{**m}` or a JSON round trip drop it, and the bar becomes an
ordinary message that replace leaves alone (a stale bar may stay; nothing is ever lost).
`StatusMessage` is one of lab 08's givens (`course.givens.status_bar`): a graded lab's wire
rebuilds it with its class, so the student's bars keep their mark on the way to the checks.
"""
from __future__ import annotations

from datetime import datetime

from course import tracing
from course.givens.status_bar import CLOSE, OPEN, StatusMessage

MODES = ("replace", "append")


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content
                       if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def is_status_message(message) -> bool:
    """A bar this framework placed and nobody has edited since (never a person's or a tool's
    message, whatever its text)."""
    return isinstance(message, StatusMessage) and message.get("content") == message.block


def _without_bar(message):
    """What replace leaves of one message: nothing of a placed bar; a placed bar someone has
    since merged with other text keeps that text (as a plain message); any other message as is."""
    if not isinstance(message, StatusMessage):
        return message
    if is_status_message(message):
        return None
    content = message.get("content")
    if isinstance(content, str) and message.block in content:
        return {**message, "content": content.replace(message.block, "", 1)}
    return dict(message)  # edited beyond recognition: kept whole, no longer a bar


def open_calls(messages: list[dict]) -> list[str]:
    """Ids of the latest assistant message's tool calls that have no result yet."""
    waiting: list[str] = []
    for message in messages:
        if not isinstance(message, dict):
            waiting = []
        elif message.get("role") == "assistant" and message.get("tool_calls"):
            calls = message["tool_calls"]
            waiting = [call.get("id") if isinstance(call, dict) else None
                       for call in (calls if isinstance(calls, list) else [calls])]
        elif message.get("role") == "tool":
            waiting = [i for i in waiting if i != message.get("tool_call_id")]
        else:
            waiting = []
    return waiting


def place_status(messages: list[dict], block: str, mode: str = "replace") -> list[dict]:
    """A new message list with `block` as a user-role message (a `StatusMessage`) at the end.

    mode "replace" first removes the bars this framework placed earlier, and nothing else: a
    person's or a tool's message that looks like a bar stays byte for byte, and text merged into
    a placed bar since stays too. "append" keeps every earlier message. `messages` is not
    changed. Raises ValueError if the last assistant message still waits for tool results: the
    bar would sit between calls and their results (send the results first).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if not isinstance(block, str) or not (block.strip().startswith(OPEN)
                                          and block.strip().endswith(CLOSE)):
        raise ValueError(f"the block must be an {OPEN}...{CLOSE} string (see render_status)")
    if not isinstance(messages, list):
        raise ValueError(f"messages must be a list of message dicts, not {type(messages).__name__}")
    waiting = open_calls(messages)
    if waiting:
        raise ValueError(f"the last assistant message's tool calls {', '.join(map(str, waiting))} "
                         f"have no results yet: a bar placed now would sit between a call and its "
                         f"result. Add the tool results first.")
    kept = messages if mode == "append" else [m for m in map(_without_bar, messages) if m is not None]
    return [*kept, tracing.tag("status bar", StatusMessage(block))]  # the trace's part for it


def latest_status(messages: list[dict]) -> str | None:
    """The text of the last bar this framework placed in the context, or None."""
    for message in reversed(messages):
        if is_status_message(message):
            return message.block.strip()
    return None


def stamp(text: str, when: str) -> str:
    """`text` with a "[YYYY-MM-DD HH:MM:SS] " prefix: how a user or tool message carries its time
    (the textbook's experiment 2-8), never the system prompt, whose bytes must not change."""
    moment = datetime.fromisoformat(str(when))
    return f"[{moment.strftime('%Y-%m-%d %H:%M:%S')}] {text}"
