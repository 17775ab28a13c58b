"""Where the bar goes: a user-role message at the end of the context (never the system prompt).

The system prompt is the start of every cached prefix: a bar there changes it each step and the
provider can reuse nothing. At the end, everything before the bar stays byte-identical. The
textbook (part 13) gives two ways to keep the end-of-context bar current:

    replace  drop the previous bar, append the new one: one bar in the context; the cache is
             reused up to where the old bar stood
    append   keep every earlier bar, append the new one (Claude Code's <system-reminder>): the
             prefix never changes, stale bars accumulate and the model must read the latest

Either way the bar never lands between an assistant message's tool calls and their results.
"""
from __future__ import annotations

from datetime import datetime

from solutions.status_bar.render import CLOSE, OPEN

MODES = ("replace", "append")


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def is_status_message(message) -> bool:
    """A user-role message that carries an `<agent_status>` block (the framework's, not a person's)."""
    return (isinstance(message, dict) and message.get("role") == "user"
            and _text(message.get("content")).lstrip().startswith(OPEN))


def open_calls(messages: list[dict]) -> list[str]:
    """Ids of the latest assistant message's tool calls that have no result yet."""
    waiting: list[str] = []
    for message in messages:
        if message.get("role") == "assistant" and message.get("tool_calls"):
            waiting = [call.get("id") for call in message["tool_calls"]]
        elif message.get("role") == "tool":
            waiting = [i for i in waiting if i != message.get("tool_call_id")]
        else:
            waiting = []
    return waiting


def place_status(messages: list[dict], block: str, mode: str = "replace") -> list[dict]:
    """A new message list with `block` as a user-role message at the end.

    mode "replace" removes every earlier status message first; "append" keeps them. `messages`
    is not changed. Raises ValueError if the last assistant message still waits for tool
    results: the bar would sit between calls and their results (send the results first).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if not isinstance(block, str) or not (block.strip().startswith(OPEN)
                                          and block.strip().endswith(CLOSE)):
        raise ValueError(f"the block must be an {OPEN}...{CLOSE} string (see render_status)")
    waiting = open_calls(messages)
    if waiting:
        raise ValueError(f"the last assistant message's tool calls {', '.join(map(str, waiting))} "
                         f"have no results yet: a bar placed now would sit between a call and its "
                         f"result. Add the tool results first.")
    kept = [m for m in messages if not (mode == "replace" and is_status_message(m))]
    return kept + [{"role": "user", "content": block}]


def latest_status(messages: list[dict]) -> str | None:
    """The text of the last status message in the context, or None."""
    for message in reversed(messages):
        if is_status_message(message):
            return _text(message["content"]).strip()
    return None


def stamp(text: str, when: str) -> str:
    """`text` with a "[YYYY-MM-DD HH:MM:SS] " prefix: how a user or tool message carries its time
    (the textbook's experiment 2-8), never the system prompt, whose bytes must not change."""
    moment = datetime.fromisoformat(str(when))
    return f"[{moment.strftime('%Y-%m-%d %H:%M:%S')}] {text}"
