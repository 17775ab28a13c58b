"""Rule `own_state`: questions about the run, answered from an <agent_status> block or the window.

A model knows nothing about its own run but what its context says. When the user asks about
the run itself -- how many times a tool was called, which steps are done, how long the work
has taken, how much budget is left -- the teaching model reads the latest well-formed status
block in any message (its format: `course.llm.status_block`). A user message holding nothing
but the block is the harness's status bar: the question is the user message before it (its last
1,000 characters, blocks removed, are read for the question). It trusts the block, as real models
trust what their harness tells them, even where the visible history says otherwise (the trace
shows both). Without a usable block it counts what is visible in the history, and says that
anything outside the window is not counted.

The same rule checks a request to make a call again ("Can you call them again?") against the
limits the bar or the system prompt sets: see `course.llm.limits`.
"""
from __future__ import annotations

import re
from datetime import datetime

from course.llm.context import Context, Decision
from course.llm.limits import rule_call_again
from course.llm.status_block import (OPEN_TAG, as_list, call_counts, latest_status, status_field,
                                     todo_items)

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
QUESTION_CHARS = 1_000
TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?")


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
        counts = call_counts(status_field(fields, "calls"))
        total = call_counts(status_field(fields, "total"))
        name = _tool_named(ctx, question)
        if isinstance(counts, dict) and name:
            return f"I have called {name} {counts.get(name, 0)} times."
        if isinstance(counts, dict):
            listed = ", ".join(f"{k} {v}" for k, v in counts.items())
            return f"I have made {sum(counts.values())} tool calls ({listed})."
        number = counts if isinstance(counts, int) else total if isinstance(total, int) else None
        return None if number is None else f"I have made {number} tool calls."
    if kind == "steps":
        todo, done, pending = (status_field(fields, k) for k in ("todo", "done", "pending"))
        if todo is not None:
            items = todo_items(todo)
            finished = [t for t, d in items if d is True]
            left = [t for t, d in items if d is not True and d != "dropped"]
            dropped = [t for t, d in items if d == "dropped"]
            return (f"Done: {'; '.join(finished) or 'nothing yet'}. "
                    f"Still open: {'; '.join(left) or 'nothing'}."
                    + (f" Dropped: {'; '.join(dropped)}." if dropped else ""))
        if done is not None or pending is not None:
            return (f"Done: {as_list(done) if done is not None else 'not stated'}. "
                    f"Still open: {as_list(pending) if pending is not None else 'not stated'}.")
        return None
    value = status_field(fields, kind)
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
