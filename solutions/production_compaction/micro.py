"""Layer 3, micro-compaction: near the limit, clear the contents of old tool results (the calls
and their result messages stay, so pairing holds; the text is saved first so it can be read
back). It is what server-side context editing does. Cheap to do, but every message after the
first cleared one changes, so the prompt cache is lost from that point on: use it only when
the context is about to overflow anyway, and clear in one batch, not a little every request.

What is saved is the full output: the original when the caller passes `originals` (the
contents before layers 1 and 2 changed them), and for a result layer 1 already replaced by a
preview, the store keeps the file it saved then (`ResultStore.save` never replaces a full
output by a preview of it). Cleared results are remembered by call id and content, not by id
alone, since some providers reuse ids in later turns.
"""
from __future__ import annotations

import json

from course.givens.compaction import text_of
from course.givens.production_compaction import ResultStore

CLEARED_MARK = "[cleared: "


def cleared_text(name: str, arguments: str, path: str) -> str:
    return (f"{CLEARED_MARK}old result of {name} {arguments}; the full text is at {path}, "
            f"read_file it if you need it again]")


def _shown_arguments(arguments: str) -> str:
    """The call's arguments without a written file's content (it is in the file)."""
    try:
        return json.dumps({k: v for k, v in json.loads(arguments).items() if k != "content"})
    except (ValueError, AttributeError, TypeError):
        return arguments


def _text(content) -> str:
    text = text_of(content if content is not None else "")
    return text if text is not None else json.dumps(content, ensure_ascii=False)


def micro_compact(messages: list[dict], keep_last: int, store: ResultStore,
                  cleared: dict, clear_now: bool,
                  originals: list | None = None) -> tuple[list[dict], int | None]:
    """(messages, edit point). Results already in `cleared` (a dict: (tool_call_id, content) ->
    the text shown instead) are shown cleared again, byte for byte. With `clear_now`, every
    other tool result except the last `keep_last` is saved to `store` and cleared too; the edit
    point is the index of the first message that changed because of it (None when nothing new
    was cleared). `originals`, if given, holds each message's content before earlier layers
    changed it (same length and order as `messages`): that is what gets saved."""
    if originals is not None and len(originals) != len(messages):
        raise ValueError(f"originals has {len(originals)} contents for {len(messages)} messages; "
                         f"pass one per message, in order")
    tool_positions = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
    protected = set(tool_positions[len(tool_positions) - keep_last:]) if keep_last > 0 else set()
    calls: dict = {}  # call id -> (name, arguments) of the latest call with that id so far
    out, edit = [], None
    for i, message in enumerate(messages):
        for call in message.get("tool_calls") or ():
            fn = call.get("function") or {}
            calls[call.get("id")] = (fn.get("name"), fn.get("arguments") or "{}")
        call_id = message.get("tool_call_id")
        if message.get("role") != "tool" or call_id is None:
            out.append(message)
            continue
        content = _text(message.get("content"))
        key = (call_id, content)
        if key not in cleared and clear_now and i not in protected:
            path = store.save(call_id, content if originals is None else _text(originals[i]))
            name, arguments = calls.get(call_id, ("a tool", "{}"))
            cleared[key] = cleared_text(name, _shown_arguments(arguments), path)
            edit = i if edit is None else edit
        if key in cleared:
            out.append({**message, "content": cleared[key]})
        else:
            out.append(message)
    return out, edit
