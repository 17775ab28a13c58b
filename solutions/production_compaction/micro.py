"""Layer 3, micro-compaction: near the limit, clear the contents of old tool results (the calls
and their result messages stay, so pairing holds; the text is saved first so it can be read
back). It is what server-side context editing does. Cheap to do, but every message after the
first cleared one changes, so the prompt cache is lost from that point on: use it only when
the context is about to overflow anyway, and clear in one batch, not a little every request.
"""
from __future__ import annotations

import json

from solutions.production_compaction.budget import ResultStore

CLEARED_MARK = "[cleared: "


def cleared_text(name: str, arguments: str, path: str) -> str:
    return (f"{CLEARED_MARK}old result of {name} {arguments}; the full text is at {path}, "
            f"read_file it if you need it again]")


def micro_compact(messages: list[dict], keep_last: int, store: ResultStore,
                  cleared: set[str], clear_now: bool) -> tuple[list[dict], int | None]:
    """(messages, edit point). Results whose id is in `cleared` are shown cleared (frozen). With
    `clear_now`, every other tool result except the last `keep_last` is cleared too and added to
    `cleared`; the edit point is the index of the first message that changed because of it
    (None when nothing new was cleared)."""
    calls = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            fn = call.get("function") or {}
            calls[call.get("id")] = (fn.get("name"), fn.get("arguments") or "{}")
    tool_positions = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
    protected = set(tool_positions[len(tool_positions) - keep_last:]) if keep_last > 0 else set()
    out, edit = [], None
    for i, message in enumerate(messages):
        call_id = message.get("tool_call_id")
        if message.get("role") != "tool" or call_id is None:
            out.append(message)
            continue
        new = call_id not in cleared and clear_now and i not in protected
        if call_id in cleared or new:
            content = message.get("content") or ""
            path = store.save(call_id, content) if new else store.path_for(call_id)
            name, arguments = calls.get(call_id, ("a tool", "{}"))
            try:
                arguments = json.dumps({k: v for k, v in json.loads(arguments).items()
                                        if k != "content"})
            except (ValueError, AttributeError):
                pass
            if new:
                cleared.add(call_id)
                edit = i if edit is None else edit
            out.append({**message, "content": cleared_text(name, arguments, path)})
        else:
            out.append(message)
    return out, edit
