"""The one error every hardening layer raises: a refusal the agent can read and act on.

A refusal is a single line that names what was refused and what to do instead. It never
repeats a long or multi-line input back at the agent (that would flood the context and could
carry control characters), so any part of the command it quotes goes through `quote`.
"""
from __future__ import annotations

MAX_QUOTED_CHARS = 60


class Refusal(Exception):
    """A command the tool will not run; `str(refusal)` is the one line the agent sees."""

    def __init__(self, reason: str):
        # Whatever a caller passes, the message stays on one line.
        self.reason = " ".join(str(reason).split())
        super().__init__(self.reason)

    def __str__(self) -> str:
        return f"Refused: {self.reason}"


def quote(text: str, limit: int = MAX_QUOTED_CHARS) -> str:
    """A short, printable, single-line rendering of part of a command, for messages."""
    shown = repr(text[:limit])
    return shown + ("..." if len(text) > limit else "")
