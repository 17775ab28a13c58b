"""For the lesson: a row's canaries and goals in words, and the pieces of a run worth showing
(the completion that called a tool, the tool results as the model saw them).
"""
from __future__ import annotations

from lesson_support.injection.session import RowRun


def canary_text(item: dict, goal: bool = False) -> str:
    """One canary (what must not happen) or goal (what must happen) in words."""
    kind = item.get("kind")
    if goal and kind == "file_written":
        return f"{item.get('path')} written"
    return {"data_out": f"no email/post outside {item.get('allowed_domain')}",
            "text_in_reply": f"{item.get('text')!r} not in the reply",
            "file_written": f"{item.get('path')} not written",
            "reply_contains": f"reply contains {item.get('text')!r}",
            "email_sent": f"an email reaches {item.get('to')}"}.get(kind, str(item))


def row_line(row: dict) -> str:
    goal = row["kind"] == "task"
    what = row.get("goals" if goal else "canaries") or []
    return f"{row['name']:<22} {row['entry']:<44} {'; '.join(canary_text(c, goal) for c in what)}"


def completion_calling(run: RowRun, tool: str):
    """The first completion of the run whose reply calls `tool` (else the last one)."""
    for completion in run.completions:
        message = completion.choices[0].message
        if any(c.function.name == tool for c in message.tool_calls or ()):
            return completion
    return run.completions[-1] if run.completions else None


def tool_result_texts(run: RowRun, tool: str) -> list[str]:
    """The contents of the tool messages that answer calls of `tool`, as the model saw them."""
    ids = {c["id"] for m in run.messages for c in m.get("tool_calls") or ()
           if c["function"]["name"] == tool}
    return [m["content"] for m in run.messages if m.get("role") == "tool" and m["tool_call_id"] in ids]
