"""Layer 1, the tool-result budget: a large output goes to a file, a preview stays in context,
and the decision is frozen once made (Chapter 11).

Freezing is what keeps the prompt cache alive. The decision for each result (keep it, or this
exact preview) is stored the first time the result is seen; every later call replays the
stored decision byte for byte, even if the limit changed since. Without the freeze a result
kept at one request could be replaced at the next, and the prefix from that message on would
change (a cache miss for everything after it).

A decision is keyed by the result's `tool_call_id` *and* its content: some providers reuse a
call id in a later turn, and keyed by the id alone the later result would be shown as the
earlier one's preview and never saved. For the same reason the store gives a second output
under the same id a file of its own, and never replaces a full output it holds by a preview of
it (a later layer that clears a preview saves nothing new: the preview's file stays).

The store (`ResultStore`), `PREVIEW_MARK`, `RESULTS_DIR` and `is_preview` are the chapter's
givens (`course.givens.production_compaction`), re-exported here.
"""
from __future__ import annotations

from course.givens.compaction import text_of
from course.givens.production_compaction import PREVIEW_MARK, RESULTS_DIR, ResultStore, is_preview

__all__ = ["PREVIEW_MARK", "RESULTS_DIR", "ResultStore", "budget_tool_results", "is_preview", "preview"]

HEAD_LINES, TAIL_LINES, LINE_CHARS = 8, 4, 200


def _cap(line: str) -> str:
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " [...]"


def preview(text: str, path: str) -> str:
    """The text that replaces a large output: where the rest is, how to read it, head and tail."""
    lines = text.splitlines()
    header = (f"{PREVIEW_MARK}{path}: {len(text):,} characters, {len(lines):,} lines; the first "
              f"{HEAD_LINES} and last {TAIL_LINES} lines follow; read_file {path} for the rest]")
    if len(lines) <= HEAD_LINES + TAIL_LINES:
        body = [_cap(x) for x in lines]
    else:
        hidden = len(lines) - HEAD_LINES - TAIL_LINES
        body = ([_cap(x) for x in lines[:HEAD_LINES]] + [f"[... {hidden:,} lines ...]"]
                + [_cap(x) for x in lines[-TAIL_LINES:]])
    return "\n".join([header, *body])


def budget_tool_results(messages: list[dict], limit: int, store: ResultStore) -> list[dict]:
    """Replace every tool result longer than `limit` characters by a preview; the full text is
    saved in `store`. A result seen before (the same `tool_call_id` and content) gets its
    frozen decision again, whatever `limit` is now. A content given as a list of text parts
    counts as its text. Returns a new list; `messages` is not modified; only tool contents
    change."""
    if not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive number of characters, got {limit!r}")
    out = []
    for message in messages:
        content = text_of(message.get("content")) if message.get("role") == "tool" else None
        if content is None:
            out.append(message)
            continue
        call_id = message.get("tool_call_id")
        key = (call_id, content)  # an id alone is not enough: some providers reuse ids
        if key not in store.decisions:
            store.decisions[key] = (preview(content, store.save(call_id, content))
                                    if len(content) > limit else None)
        decided = store.decisions[key]
        out.append(message if decided is None else {**message, "content": decided})
    return out
