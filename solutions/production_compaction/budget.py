"""Layer 1, the tool-result budget: a large output goes to a file, a preview stays in context,
and the decision is frozen once made (Chapter 11).

Freezing is what keeps the prompt cache alive. The decision for each result (keep it, or this
exact preview) is stored by `tool_call_id` the first time the result is seen; every later call
replays the stored decision byte for byte, even if the limit changed since. Without the freeze
a result kept at one request could be replaced at the next, and the prefix from that message on
would change (a cache miss for everything after it).
"""
from __future__ import annotations

from pathlib import Path

RESULTS_DIR = ".agent/results"
PREVIEW_MARK = "[output saved to "
HEAD_LINES, TAIL_LINES, LINE_CHARS = 8, 4, 200


class ResultStore:
    """Where full outputs go: files under `directory` (or in memory if it is None), plus the
    frozen decisions (`decisions[tool_call_id]` is the preview that replaced the result, or None
    when the result was kept)."""

    def __init__(self, directory: str | Path | None = None):
        self.directory = Path(directory) if directory is not None else None
        self.files: dict[str, str] = {}
        self.decisions: dict[str, str | None] = {}

    def path_for(self, call_id: str) -> str:
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in call_id)
        return f"{RESULTS_DIR}/{safe}.txt"

    def save(self, call_id: str, text: str) -> str:
        """Keep `text` in full; returns the path the agent can read it back from."""
        path = self.path_for(call_id)
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
    saved in `store`. A result seen before gets its frozen decision again, whatever `limit` is
    now. Returns a new list; `messages` is not modified; only tool contents change."""
    if not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive number of characters, got {limit!r}")
    out = []
    for message in messages:
        if message.get("role") != "tool" or not isinstance(message.get("content"), str):
            out.append(message)
            continue
        call_id = message.get("tool_call_id")
        if call_id not in store.decisions:
            content = message["content"]
            store.decisions[call_id] = (preview(content, store.save(call_id, content))
                                        if len(content) > limit else None)
        decided = store.decisions[call_id]
        out.append(message if decided is None else {**message, "content": decided})
    return out
