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
"""
from __future__ import annotations

from pathlib import Path

from course.givens.compaction import text_of

RESULTS_DIR = ".agent/results"
PREVIEW_MARK = "[output saved to "
HEAD_LINES, TAIL_LINES, LINE_CHARS = 8, 4, 200


class ResultStore:
    """Where full outputs go: files under `directory` (or in memory if it is None), plus the
    frozen decisions (`decisions[(tool_call_id, content)]` is the preview that replaced the
    result, or None when the result was kept)."""

    def __init__(self, directory: str | Path | None = None):
        self.directory = Path(directory) if directory is not None else None
        self.files: dict[str, str] = {}
        self.decisions: dict[tuple[str, str], str | None] = {}

    def path_for(self, call_id: str, n: int = 1) -> str:
        """The n-th file for outputs of `call_id` (n > 1 only when an id was reused)."""
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in str(call_id))
        return f"{RESULTS_DIR}/{safe}{'' if n == 1 else f'-{n}'}.txt"

    def held_path(self, text: str) -> str | None:
        """The path of the full output `text` is a preview of, if this store holds it."""
        if not is_preview(text):
            return None
        path = text[len(PREVIEW_MARK):].split(":", 1)[0]
        return path if path in self.files else None

    def save(self, call_id: str, text: str) -> str:
        """Keep `text` in full; returns the path the agent can read it back from. Saving the
        same output again returns its path; a preview of an output held here returns the
        output's path and saves nothing (a full output is never replaced by a preview); a
        different output under a reused id gets a file of its own."""
        held = self.held_path(text)
        if held is not None:
            return held
        n = 1
        while self.files.get(self.path_for(call_id, n), text) != text:
            n += 1
        path = self.path_for(call_id, n)
        self.files[path] = text
        if self.directory is not None:
            target = self.directory / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        return path

    def read(self, path: str) -> str:
        if path not in self.files:
            raise FileNotFoundError(f"no saved output at {path}")
        return self.files[path]


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


def is_preview(content) -> bool:
    return isinstance(content, str) and content.startswith(PREVIEW_MARK)


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
