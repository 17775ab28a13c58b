"""Rule `own_state`: questions about the run, answered from an <agent_status> block or the window.

A model knows nothing about its own run but what its context says. When the user asks about
the run itself -- how many times a tool was called, which steps are done, how long the work
has taken, how much budget is left -- the teaching model looks for the latest well-formed
status block in any message:

    <agent_status>
    elapsed: 14m 05s
    tool_calls: read_file=3, run_command=5
    todo: [x] reproduce the failure; [x] find the cause; [ ] fix it
    budget: 41,200 of 200,000 tokens
    </agent_status>

The body is a JSON object or `key: value` lines. Keys it reads (any case; `-` or a space count
as `_`): `tool_calls`/`calls` ("name=N, ..." or a number), `total_calls`, `calls <tool> [<target>]` (a
counter the question names, e.g. "calls call Xfinity: 3/3 max"); `todo`/`steps`/`plan`/`tasks`
(items split by ";", each "[x] ...", "[ ] ..." or "[-] ..." for dropped), `done`/`completed` and
`pending`/`remaining`/`left`/`open`; `elapsed`/`running_for`/`duration`; `budget`/`tokens`.
A user message holding nothing but the block is the harness's status bar: the question is the
user message before it (its last 1,000 characters, blocks removed, are read for the question). It trusts the block, as real models trust what their harness tells them,
even where the visible history says otherwise (the trace shows both). A malformed block (no closing tag, or a line
that is not `key: value`) is ignored with a trace step. Without a usable block it counts what
is visible in the history, and says that anything outside the window is not counted.

The same rule checks a request to make a call again ("Can you call them again?") against the
limits the bar or the system prompt sets: see `course.llm.limits`.
"""
from __future__ import annotations

import json
import re
from datetime import datetime

from course.llm.context import Context, Decision
from course.llm.limits import rule_call_again

OPEN_TAG, CLOSE_TAG = "<agent_status>", "</agent_status>"
LINE = re.compile(r"^\s*(?:[-*]\s*)?([A-Za-z][\w -]*?)\s*:\s*(.*?)\s*$")
QUESTIONS = {
    "calls": re.compile(r"\bhow (?:many|often)\b[^?.]{0,80}?\b(?:call|calls|called|use|used|run|ran|"
                        r"invoke)|\bnumber of (?:tool )?calls\b", re.I),
    "steps": re.compile(r"\b(?:which|what)\b[^?.]{0,40}?\b(?:steps?|tasks?|todos?|items?)\b"
                        r"[^?.]{0,80}?\b(?:done|finished|complete|completed|left|remaining|pending|open)\b"
                        r"|\bprogress\b|\btodo list\b", re.I),
    "elapsed": re.compile(r"\bhow long (?:have|has|did|are|were)\b|\bhow much time\b|\belapsed\b"
                          r"|\bbeen at (?:it|this)\b|\brunning for\b", re.I),
    "budget": re.compile(r"\bbudget\b|\bhow many tokens\b|\btokens? (?:left|used|remaining)\b", re.I),
}
KEYS = {
    "calls": ("tool_calls", "calls"), "total": ("total_calls", "calls_total"),
    "todo": ("todo", "steps", "plan", "tasks"), "done": ("done", "completed"),
    "pending": ("pending", "remaining", "left", "open"),
    "elapsed": ("elapsed", "running_for", "duration", "time_elapsed"),
    "budget": ("budget", "tokens", "token_budget"),
}
QUESTION_CHARS = 1_000
TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?")


def _parse_body(body: str) -> tuple[dict | None, str]:
    """(fields, "") for a well-formed body, (None, reason) otherwise."""
    text = body.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            return None, f"its JSON does not parse ({exc.__class__.__name__})"
        if not isinstance(data, dict):
            return None, "its JSON is not an object"
        return {_key(k): v for k, v in data.items()}, ""
    fields = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        match = LINE.match(line)
        if not match:
            return None, f"line {n} is not 'key: value'"
        fields[_key(match.group(1))] = match.group(2)
    return (fields, "") if fields else (None, "it is empty")


def _key(key) -> str:
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
            fields, reason = (None, f"it has no closing {CLOSE_TAG}") if body is None else _parse_body(body)
            if fields is not None:
                return i, fields
            ctx.note("own_state", f"malformed <agent_status> block in messages[{i}] ignored: {reason}", [i])
    return None


def _field(fields: dict, what: str):
    for key, value in fields.items():
        if re.sub(r"[\s-]+", "_", key) in KEYS[what] and value not in (None, ""):
            return value
    return None


def _counts(value) -> dict[str, int] | int | None:
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


def _items(value) -> list[tuple[str, bool | None]]:
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


def _list(value) -> str:
    return "; ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def _tool_named(ctx: Context, question: str) -> str | None:
    names = set(ctx.by_name) | {c.name for c in ctx.calls}
    for name in sorted(names, key=len, reverse=True):
        if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", question):
            return name
    return None


def _specific_count(fields: dict, question: str) -> str | None:
    """A "calls <tool> [<target>]" field whose target (or tool) the question names."""
    best = None
    for key, value in fields.items():
        if not key.startswith("calls "):
            continue
        tool, _, target = key[6:].partition(" ")
        named = target or tool
        match = re.search(rf"(?<![\w-]){re.escape(named)}(?![\w-])", question, re.I)
        if match and (best is None or len(key) > len(best[0])):
            best = (key, tool, match.group(0) if target else "", value)
    if best is None:
        return None
    _, tool, target, value = best
    return f"the counter for {tool}{' ' + target if target else ''} says {value}."


def _from_status(kind: str, fields: dict, ctx: Context, question: str) -> str | None:
    if kind == "calls":
        specific = _specific_count(fields, question)
        if specific:
            return specific
        counts = _counts(_field(fields, "calls"))
        total = _counts(_field(fields, "total"))
        name = _tool_named(ctx, question)
        if isinstance(counts, dict) and name:
            return f"I have called {name} {counts.get(name, 0)} times."
        if isinstance(counts, dict):
            listed = ", ".join(f"{k} {v}" for k, v in counts.items())
            return f"I have made {sum(counts.values())} tool calls ({listed})."
        number = counts if isinstance(counts, int) else total if isinstance(total, int) else None
        return None if number is None else f"I have made {number} tool calls."
    if kind == "steps":
        todo, done, pending = (_field(fields, k) for k in ("todo", "done", "pending"))
        if todo is not None:
            items = _items(todo)
            finished = [t for t, d in items if d is True]
            left = [t for t, d in items if d is not True and d != "dropped"]
            dropped = [t for t, d in items if d == "dropped"]
            return (f"Done: {'; '.join(finished) or 'nothing yet'}. "
                    f"Still open: {'; '.join(left) or 'nothing'}."
                    + (f" Dropped: {'; '.join(dropped)}." if dropped else ""))
        if done is not None or pending is not None:
            return (f"Done: {_list(done) if done is not None else 'not stated'}. "
                    f"Still open: {_list(pending) if pending is not None else 'not stated'}.")
        return None
    value = _field(fields, kind)
    if value is None:
        return None
    return (f"We have been at it for {value}." if kind == "elapsed"
            else f"Budget: {value}.")


def _calls(n: int, name: str | None) -> str:
    """'1 call to read_file', '3 tool calls'."""
    noun = "call" if n == 1 else "calls"
    return f"{n} {noun} to {name}" if name else f"{n} tool {noun}"


def _from_window(kind: str, ctx: Context, question: str) -> tuple[str, list[int]]:
    tail = " Anything no longer in my context is not counted."
    if kind == "calls":
        name = _tool_named(ctx, question)
        calls = [c for c in ctx.calls if name is None or c.name == name]
        where = [c.index for c in calls]
        return (f"I can see {_calls(len(calls), name)} in this conversation"
                + (f" (in messages {', '.join(map(str, sorted(set(where))))})." if where else ".")
                + tail), where
    if kind == "steps":
        done = [(c, ctx.results[c.id]) for c in ctx.calls
                if c.id in ctx.results and not ctx.results[c.id].error]
        listed = ", ".join(c.name for c, _ in done) or "none"
        return (f"No status block tells me the plan. Calls I can see that succeeded: {listed}."
                + tail), [r.index for _, r in done]
    if kind == "elapsed":
        stamps = [(i, m.group(0)) for i in range(len(ctx.messages))
                  for m in TIMESTAMP.finditer(ctx.text(i))]
        try:
            times = sorted((datetime.fromisoformat(s.replace(" ", "T")), i) for i, s in stamps)
        except ValueError:
            times = []
        if len(times) >= 2:
            minutes = (times[-1][0] - times[0][0]).total_seconds() / 60
            return (f"No status block says so; the earliest and latest times I can see are "
                    f"{minutes:.0f} minutes apart." + tail), [times[0][1], times[-1][1]]
        return "I cannot tell: nothing in my context records the time.", []
    return "I cannot tell: nothing in my context records the budget.", []


def rule_own_state(ctx: Context) -> Decision | None:
    """Questions about the run: from the latest <agent_status> block, else the visible history."""
    status = latest_status(ctx) if any(OPEN_TAG in ctx.text(i) for i in range(len(ctx.messages))) else None
    if not ctx.asked_now:
        return None
    question = ctx.request[-QUESTION_CHARS:]  # a question about the run ends the message
    kind = next((k for k, pattern in QUESTIONS.items() if pattern.search(question)), None)
    if kind is None:  # not a question about the run; perhaps a request to call again
        return rule_call_again(ctx, status)
    if status is not None:
        index, fields = status
        text = _from_status(kind, fields, ctx, question)
        if text is not None:
            why = (f"a question about the run ({kind}); answered from the <agent_status> block in "
                   f"messages[{index}], trusted as real models trust it")
            if kind == "calls":
                name = _tool_named(ctx, question)
                seen = sum(1 for c in ctx.calls if name is None or c.name == name)
                why += f" (the visible history shows {_calls(seen, name)})"
            return ctx.answer("own_state", why, f"According to my status block: {text}",
                              [ctx.last_user, index])
        ctx.note("own_state", f"the <agent_status> block in messages[{index}] says nothing about "
                              f"{kind}: counting the visible history instead", [index])
    text, evidence = _from_window(kind, ctx, question)
    return ctx.answer("own_state", f"a question about the run ({kind}) and no usable "
                                   f"<agent_status> block: counted what is visible",
                      text, [ctx.last_user, *evidence])
