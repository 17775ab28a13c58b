"""The status as an `<agent_status>` block: key-value lines, sorted, in a fixed format.

Keys are words (letters, digits, `_`, `-`, spaces): `calls`, `calls call Xfinity`, `todo`,
`elapsed`, `budget`, `error`, `cwd`...; each value is one line.

Key-value lines rather than prose (the textbook, part 12: a model finds "key: value" at once,
while prose sends it back to scanning), and the same bytes for the same status whatever order
its dicts were filled in, so a bar that did not change does not disturb the prompt cache. The
tags and their inverse, `parse_status`, are lab 08's givens (`course.givens.status_bar`).
"""
from __future__ import annotations

import json
import re
from datetime import datetime

from course.givens.status_bar import CLOSE, OPEN
from solutions.status_bar.status import limit_for

_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
_DIGITS = re.compile(r"(\d+)")
_TAG = re.compile(r"</?agent_status>", re.I)
_KEY_UNSAFE = re.compile(r"[^\w -]")


def _clean(value) -> str:
    """One line of text: control characters and runs of blanks become one space, and a value
    cannot open or close the block (a tool's error message is not trusted text)."""
    text = " ".join(_CONTROL.sub(" ", str(value)).split())
    return _TAG.sub(lambda m: "[" + m.group(0)[1:-1] + "]", text)


def _natural(key: str):
    """Sort key: digit runs compare as numbers, so todo.2 comes before todo.10."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in _DIGITS.split(key)]


def _clock(iso: str) -> str:
    return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M:%S")


def _key_part(text) -> str:
    """A name inside a key: letters, digits, _, - and single spaces only (so "key: value"
    stays unambiguous for any parser)."""
    return " ".join(_KEY_UNSAFE.sub("_", _clean(text)).split())


def _duration(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    return (f"{hours}h " if hours else "") + f"{rest // 60}m {rest % 60:02d}s"


TODO_MARK = {"done": "[x]", "pending": "[ ]", "in_progress": "[ ]", "cancelled": "[-]"}


def status_fields(status: dict) -> dict[str, str]:
    """The status as {key: value} text fields, the lines `render_status` writes.

    calls               every tool's total, "name=N, ..." sorted by name
    calls <tool>        a tool's total against its limit ("12/20 max"), when it has a limit
    calls <tool> <target>   one target's calls, with the limit if any ("3/3 max, limit reached")
    todo                "[x] done; [ ] open (in_progress); [-] dropped (cancelled)", by id
    now, started, elapsed, budget, cwd, error, error arguments, error hint, error at
    """
    fields: dict[str, str] = {}
    calls = status.get("calls") or {}
    explicit = [k for k in (status.get("limits") or {}) if not k.endswith(".*")]
    totals = {k: v for k, v in calls.items() if "." not in k}
    if totals:
        fields["calls"] = ", ".join(f"{_key_part(k)}={totals[k]}" for k in sorted(totals, key=_natural))
    for key in set(calls) | set(explicit):
        count, limit = calls.get(key, 0), limit_for(status, key)
        if "." not in key and limit is None:
            continue
        value = str(count) if limit is None else f"{count}/{limit} max"
        if limit is not None and count >= limit:
            value += ", limit reached" if count == limit else f", over the limit by {count - limit}"
        tool, _, target = key.partition(".")
        fields[" ".join(filter(None, ("calls", _key_part(tool), _key_part(target))))] = value
    todos = status.get("todos") or {}
    if todos:
        items = []
        for todo_id in sorted(todos, key=_natural):
            item = todos[todo_id]
            text = _clean(item["content"]).replace(";", ",")
            suffix = "" if item["status"] in ("done", "pending") else f" ({item['status']})"
            items.append(f"{TODO_MARK[item['status']]} {_clean(todo_id)}. {text}{suffix}")
        fields["todo"] = "; ".join(items)
    if status.get("now"):
        fields["now"] = _clock(status["now"])
        started = status.get("started") or status["now"]
        fields["started"] = _clock(started)
        elapsed = datetime.fromisoformat(status["now"]) - datetime.fromisoformat(started)
        fields["elapsed"] = _duration(int(elapsed.total_seconds()))
    tokens = status.get("tokens") or {}
    if tokens.get("used") or tokens.get("budget"):
        used, budget = tokens.get("used", 0), tokens.get("budget")
        fields["budget"] = (f"{used} of {budget} tokens used, {budget - used} left" if budget
                            else f"{used} tokens used, no budget set")
    error = status.get("last_error")
    if error:
        where = f" in {_clean(error['tool'])}" if error.get("tool") else ""
        fields["error"] = f"{_clean(error.get('type') or 'Error')}{where}: {_clean(error['message'])}"
        if error.get("hint"):
            fields["error hint"] = _clean(error["hint"])
        if error.get("arguments") is not None:
            fields["error arguments"] = _clean(json.dumps(
                error["arguments"], sort_keys=True, ensure_ascii=False, separators=(", ", ": ")))
        if error.get("at"):
            fields["error at"] = _clock(error["at"])
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
