"""The <agent_status> block: found in the context and read, for rule `own_state`.

A harness tells the model about its own run in a status block, in any message:

    <agent_status>
    elapsed: 14m 05s
    tool_calls: read_file=3, run_command=5
    todo: [x] reproduce the failure; [x] find the cause; [ ] fix it
    budget: 41,200 of 200,000 tokens
    </agent_status>

The body is a JSON object or `key: value` lines. Keys are read in any case, `-` or a space
counting as `_` (KEYS lists the names of each field): `tool_calls`/`calls` ("name=N, ..." or a
number), `total_calls`, `calls <tool> [<target>]` (a counter, e.g. "calls call Xfinity: 3/3
max"); `todo`/`steps`/`plan`/`tasks` (items split by ";", each "[x] ...", "[ ] ..." or "[-] ..."
for dropped), `done`/`completed` and `pending`/`remaining`/`left`/`open`;
`elapsed`/`running_for`/`duration`; `budget`/`tokens`. The latest well-formed block counts; a
malformed one (no closing tag, or a line that is not `key: value`) is ignored with a trace step.
"""
from __future__ import annotations

import json
import re

from course.llm.context import Context

OPEN_TAG, CLOSE_TAG = "<agent_status>", "</agent_status>"
LINE = re.compile(r"^\s*(?:[-*]\s*)?([A-Za-z][\w -]*?)\s*:\s*(.*?)\s*$")
KEYS = {
    "calls": ("tool_calls", "calls"), "total": ("total_calls", "calls_total"),
    "todo": ("todo", "steps", "plan", "tasks"), "done": ("done", "completed"),
    "pending": ("pending", "remaining", "left", "open"),
    "elapsed": ("elapsed", "running_for", "duration", "time_elapsed"),
    "budget": ("budget", "tokens", "token_budget"),
}


def parse_body(body: str) -> tuple[dict | None, str]:
    """(fields, "") for a well-formed body, (None, reason) otherwise."""
    text = body.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            return None, f"its JSON does not parse ({exc.__class__.__name__})"
        if not isinstance(data, dict):
            return None, "its JSON is not an object"
        return {normal_key(k): v for k, v in data.items()}, ""
    fields = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        match = LINE.match(line)
        if not match:
            return None, f"line {n} is not 'key: value'"
        fields[normal_key(match.group(1))] = match.group(2)
    return (fields, "") if fields else (None, "it is empty")


def normal_key(key) -> str:
    return " ".join(str(key).lower().split())


def latest_status(ctx: Context) -> tuple[int, dict] | None:
    """(message index, fields) of the latest well-formed block; notes each malformed one."""
    for i in range(len(ctx.messages) - 1, -1, -1):
        text = ctx.text(i)
        if OPEN_TAG not in text:
            continue
        blocks = []
        for start in [m.start() for m in re.finditer(re.escape(OPEN_TAG), text)]:
            end = text.find(CLOSE_TAG, start)
            body = None if end < 0 else text[start + len(OPEN_TAG):end]
            blocks.append(body)
        for body in reversed(blocks):
            fields, reason = (None, f"it has no closing {CLOSE_TAG}") if body is None else parse_body(body)
            if fields is not None:
                return i, fields
            ctx.note("own_state", f"malformed <agent_status> block in messages[{i}] ignored: {reason}", [i])
    return None


def status_field(fields: dict, what: str):
    for key, value in fields.items():
        if re.sub(r"[\s-]+", "_", key) in KEYS[what] and value not in (None, ""):
            return value
    return None


def call_counts(value) -> dict[str, int] | int | None:
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items() if isinstance(v, int)}
    if isinstance(value, int):
        return value
    text = str(value)
    pairs = re.findall(r"([A-Za-z_][\w.-]*)\s*[=:]\s*(\d+)", text)
    if pairs:
        return {name: int(n) for name, n in pairs}
    number = re.search(r"\d+", text)
    return int(number.group(0)) if number else None


def todo_items(value) -> list[tuple[str, bool | None]]:
    """Todo items as (text, done?) from '[x] a; [ ] b' or a JSON list."""
    raw = value if isinstance(value, list) else re.split(r"\s*[;|]\s*", str(value))
    items = []
    for item in raw:
        if isinstance(item, dict):
            text = str(item.get("step") or item.get("task") or item.get("name") or item)
            items.append((text, bool(item.get("done"))))
            continue
        item = str(item).strip()
        mark = re.match(r"^\[([xX✓ -])\]\s*|^([✓✔☑])\s*|^([☐○])\s*", item)
        if mark and mark.group(1) == "-":
            items.append((item[mark.end():], "dropped"))
        elif mark:
            items.append((item[mark.end():], bool((mark.group(1) or "").strip() or mark.group(2))))
        elif item:
            items.append((item, None))
    return items


def as_list(value) -> str:
    return "; ".join(str(v) for v in value) if isinstance(value, list) else str(value)
