"""Level 3 of the action space (Chapter 15): a script filters the data where it lies, and only
what it prints enters the context (the second textbook section, 21.6.6: 50 MB of API data
filtered in the sandbox so that a few lines reach the model).

The command runs in chapter 07's hardened terminal tool (no shell, option rules, paths kept in
the workspace, hygiene); the confinement layer is left out so that the tool runs where
bubblewrap cannot (inside a graded lab's worker). Whatever the command prints, at most `limit`
lines go into the context, with a note saying how many were left out.
"""
from __future__ import annotations

from course.givens.architecture import count_tokens
from solutions.sandbox import HardenedTerminalTool

TOOL_LAYERS = ("parse", "arguments", "hygiene")


def filter_in_sandbox(command, limit, workspace):
    """Run `command` in the workspace through chapter 07's HardenedTerminalTool (layers
    TOOL_LAYERS) and keep the first `limit` lines of its reply. Returns {"text": what enters the
    context (the kept lines, then, if any were cut, the line "[N more lines not shown: narrow
    the filter]"), "lines": lines in the reply, "shown": lines kept, "tokens":
    count_tokens(text)}. A refused command's reply is its one-line refusal, kept whole. Raises
    ValueError when `limit` is not a positive integer."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive number of lines, got {limit!r}")
    reply = HardenedTerminalTool(workspace, layers=TOOL_LAYERS).run(command)
    lines = reply.splitlines()
    kept = lines[:limit]
    text = "\n".join(kept)
    if len(lines) > limit:
        text += f"\n[{len(lines) - limit} more lines not shown: narrow the filter]"
    return {"text": text, "lines": len(lines), "shown": len(kept), "tokens": count_tokens(text)}
