"""The status as an `<agent_status>` block: key-value lines, sorted, in a fixed format.

Key-value lines rather than prose (the textbook, part 12: a model finds "key: value" at once,
while prose sends it back to scanning), and the same bytes for the same status whatever order
its dicts were filled in, so a bar that did not change does not disturb the prompt cache.
"""
from __future__ import annotations

import json
import re
from datetime import datetime

from solutions.status_bar.status import limit_for

OPEN, CLOSE = "<agent_status>", "</agent_status>"
CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
DIGITS = re.compile(r"(\d+)")
TAG = re.compile(r"</?agent_status>", re.I)


def _clean(value) -> str:
    """One line of text: control characters and runs of blanks become one space, and a value
    cannot open or close the block (a tool's error message is not trusted text)."""
    text = " ".join(CONTROL.sub(" ", str(value)).split())
    return TAG.sub(lambda m: "[" + m.group(0)[1:-1] + "]", text)


def _natural(key: str):
    """Sort key: digit runs compare as numbers, so todo.2 comes before todo.10."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in DIGITS.split(key)]


def _clock(iso: str) -> str:
    return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M:%S")


def status_fields(status: dict) -> dict[str, str]:
    """The status as {key: value} text fields, the lines `render_status` writes."""
    fields: dict[str, str] = {}
    calls = status.get("calls") or {}
    explicit = [k for k in (status.get("limits") or {}) if not k.endswith(".*")]
    for key in set(calls) | set(explicit):
        count, limit = calls.get(key, 0), limit_for(status, key)
        value = str(count) if limit is None else f"{count}/{limit} max"
        if limit is not None and count >= limit:
            value += ", limit reached" if count == limit else f", over the limit by {count - limit}"
        fields[f"calls.{_clean(key)}"] = value
    for todo_id, item in (status.get("todos") or {}).items():
        fields[f"todo.{_clean(todo_id)}"] = f"{item['status']} | {_clean(item['content'])}"
    if status.get("now"):
        fields["time.now"] = _clock(status["now"])
        started = status.get("started") or status["now"]
        fields["time.started"] = _clock(started)
        elapsed = datetime.fromisoformat(status["now"]) - datetime.fromisoformat(started)
        fields["time.elapsed"] = str(elapsed)
    tokens = status.get("tokens") or {}
    if tokens.get("used") or tokens.get("budget"):
        fields["tokens.used"] = str(tokens.get("used", 0))
        if tokens.get("budget"):
            fields["tokens.budget"] = str(tokens["budget"])
            fields["tokens.left"] = str(tokens["budget"] - tokens.get("used", 0))
    error = status.get("last_error")
    if error:
        for name in ("tool", "type", "message", "hint"):
            if error.get(name):
                fields[f"error.{name}"] = _clean(error[name])
        if error.get("arguments") is not None:
            fields["error.arguments"] = json.dumps(error["arguments"], sort_keys=True,
                                                   ensure_ascii=False, separators=(", ", ": "))
        if error.get("at"):
            fields["error.at"] = _clock(error["at"])
    if status.get("cwd"):
        fields["cwd"] = _clean(status["cwd"])
    return fields


def render_fields(fields: dict[str, str]) -> str:
    lines = [f"{key}: {fields[key]}" for key in sorted(fields, key=_natural)]
    return "\n".join([OPEN, *lines, CLOSE])


def render_status(status: dict) -> str:
    """The `<agent_status>` block for a status: one "key: value" line per fact, sorted by key.

    The same status gives the same bytes, whatever order its dicts were built in."""
    return render_fields(status_fields(status))


def parse_status(block: str) -> dict[str, str]:
    """The {key: value} fields of an `<agent_status>` block (the inverse of `render_status`)."""
    text = block.strip()
    if not (text.startswith(OPEN) and text.endswith(CLOSE)):
        raise ValueError(f"not an agent status block: it must start with {OPEN} and end with {CLOSE}")
    fields = {}
    for line in text[len(OPEN):-len(CLOSE)].strip().splitlines():
        key, sep, value = line.partition(": ")
        if not sep:
            raise ValueError(f"not a 'key: value' line in the status block: {line!r}")
        fields[key.strip()] = value.strip()
    return fields
