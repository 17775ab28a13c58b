"""Layer 2, noise removal: lines that carry nothing (progress bars, download meters, one line per
passing test) are deleted from tool results, not summarised: a summary of noise is still
noise, and costs a model call. The result says how many lines went, by rule, so the model knows.
The rules (`NOISE_RULES`) and the note's mark are the chapter's givens, re-exported here.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

from course.givens.production_compaction import NOISE_MARK, NOISE_RULES, is_preview

__all__ = ["NOISE_MARK", "NOISE_RULES", "drop_noise"]


def _compiled(rules) -> list[tuple[str, re.Pattern]]:
    if isinstance(rules, Mapping):
        items = list(rules.items())
    else:
        items = [(str(getattr(r, "pattern", r)), r) for r in rules]
    return [(name, pattern if isinstance(pattern, re.Pattern) else re.compile(pattern))
            for name, pattern in items]


def drop_noise(messages: list[dict], rules) -> list[dict]:
    """Delete, from each tool result, the lines matched by one of `rules` ({name: regex}, or a
    list of regexes) and end it with a note of what was removed. Messages are never removed or
    reordered (pairing is untouched); budget previews are left as they are (they are frozen).
    Returns a new list; `messages` is not modified."""
    compiled = _compiled(rules)
    out = []
    for message in messages:
        content = message.get("content")
        if (message.get("role") != "tool" or not isinstance(content, str) or is_preview(content)
                or not compiled):
            out.append(message)
            continue
        kept, removed = [], {}
        for line in content.splitlines():
            rule = next((name for name, pattern in compiled if pattern.search(line)), None)
            if rule is None:
                kept.append(line)
            else:
                removed[rule] = removed.get(rule, 0) + 1
        if not removed:
            out.append(message)
            continue
        note = ", ".join(f"{n} {name} lines" for name, n in removed.items())
        out.append({**message, "content": "\n".join(kept + [f"{NOISE_MARK}{note}]"])})
    return out
