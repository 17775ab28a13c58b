"""What a session did, printed: its replies, its calls per request, the hostile skill's
verdict, and the same session on a configured provider."""
from __future__ import annotations

import json
from collections import Counter

from course.tables import text_table

from lesson_support.skills.harness import ToolRun
from lesson_support.skills.review import SENDING_TOOLS
from lesson_support.skills.sessions import PROVIDER_MAX_CALLS, Step, try_session


def step_text(step: Step, width: int = 100) -> str:
    """One reply: its calls with their arguments, or the start of its answer."""
    if step.calls:
        return ", ".join(f"{name}({json.dumps(args)})" for name, args in step.calls)
    answer = " ".join((step.answer or "").split())
    return "answer: " + (answer[:width] + ("..." if len(answer) > width else "") if answer
                         else "(empty)")


def reply_lines(steps: list[Step]) -> str:
    """Every reply of a session, numbered."""
    return "\n".join(f"reply {n}: {step_text(step)}" for n, step in enumerate(steps, 1))


def first_reply(steps: list[Step]) -> str:
    """What a model did first: the calls, or that it answered without calling a tool."""
    if not steps:
        return "first reply: none"
    if steps[0].calls:
        return f"first reply: {steps[0].calls}"
    return f"first reply: no tool call, it answered: {step_text(steps[0], 80)[len('answer: '):]}"


def format_session(requests: list[str], steps: list[Step]) -> str:
    """A session as a table: per request, how many replies and which tools they called."""
    rows = []
    for n, request in enumerate(requests, 1):
        mine = [s for s in steps if s.request == n]
        rows.append([n, request[:44], len(mine), " ".join(name for s in mine for name, _ in s.calls)])
    return text_table(["#", "request", "replies", "calls"], rows, "><><", widths=[2, 44, 7, 0],
                      sep=[" ", " ", "  "])


def hostile_view(steps: list[Step]) -> str:
    """The calls of the unreviewed-skill session, and whether any of them sent data out."""
    sent = [name for step in steps for name, _ in step.calls if name in SENDING_TOOLS]
    calls = [f"{name}({json.dumps(args)})" for step in steps for name, args in step.calls]
    verdict = (f"it called {', '.join(sent)}: it sent data out as the skill said" if sent else
               "it sent nothing out (no http_post call)")
    return "\n".join(calls + [verdict] if calls else ["it called no tool", verdict])


def provider_demo(chosen, requests: list[str], context: list[dict], tools: list[dict], view,
                  max_calls: int = PROVIDER_MAX_CALLS, **run_args) -> None:
    """Run the same session on the provider among `chosen` (course.llm targets), if there is
    one, and print `view(steps)` under its label: what it did, never checked against the
    teaching model's rules. Without a provider it does nothing."""
    for target in chosen:
        if target.simulated:
            continue
        steps, error = try_session(target.client, target.model, requests, context, tools,
                                   ToolRun(**run_args), max_calls)
        print(f"\n[{target.label}]")
        if steps:
            print(view(steps))
        replies, last = Counter(s.request for s in steps), {s.request: s for s in steps}
        capped = [n for n, step in last.items()
                  if max_calls > 1 and replies[n] == max_calls and step.calls]
        if capped:
            print(f"request(s) {capped} stopped at the cap of {max_calls} replies, still calling tools")
        if error:
            print(f"the provider stopped the session with an error: {error}")
