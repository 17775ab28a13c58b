"""Step through a streamed reply delta by delta (Chapter 13): the reasoning, the text and each
call's arguments growing, the call the streaming loop could start, and, with a toggle for the
history policy, what the next request sends back of the reasoning.

The logic is in plain functions (tested in tests/lesson_support/test_reasoning_stream_widget.py);
the widget only wires controls.
"""
from __future__ import annotations

import html

from course.givens.reasoning_stream import FIELD, POLICIES
from course.i18n import N_, _
from lesson_support.reasoning_stream import delta_kind
from solutions.reasoning_stream import first_ready_call, history_for, parse_stream


def state_at(chunks: list[dict], n: int, tools=None) -> dict:
    """The reply after its first `n` chunks (clamped): the kind of chunk n, the message so far,
    and the first call that may start (its id, or None)."""
    n = max(0, min(n, len(chunks)))
    partial = parse_stream(chunks[:n])
    ready = first_ready_call(partial, tools)
    return {"n": n, "kind": delta_kind(chunks[n - 1]) if n else N_("nothing yet"), "message": partial,
            "ready": ready["id"] if ready else None}


def next_request_rows(messages: list, policy: str) -> list[dict]:
    """For each message of the history: its role and whether the next request sends its
    reasoning under `policy` ("sent", "dropped", or "" for a message that never had any)."""
    out = history_for(policy, messages)
    rows = []
    for before, after in zip(messages, out):
        had = isinstance(before.get(FIELD), str)
        sends = isinstance(after.get(FIELD), str) and after.get(FIELD) != ""
        rows.append({"role": before.get("role"),
                     "reasoning": N_("sent") if sends else N_("dropped") if had else ""})
    return rows


def state_html(state: dict) -> str:
    m = state["message"]
    calls = "".join(f"<li><code>{html.escape(c['function']['name'] or '?')}</code> "
                    f"<code>{html.escape(c['function']['arguments'])}</code></li>"
                    for c in m["tool_calls"] or [])
    line = _("chunk {number}: {kind}; ready to start: {call}").format(
        number=state["n"], kind="<b>" + html.escape(_(state["kind"])) + "</b>",
        call=html.escape(state["ready"] or _("none")))
    reasoning = _("reasoning: {text}").format(text=html.escape(m["reasoning_content"] or ""))
    text = _("text: {text}").format(text=html.escape(m["content"] or ""))
    return f"<p>{line}</p><pre>{reasoning}</pre><pre>{text}</pre><ul>{calls}</ul>"


def rows_html(rows: list[dict]) -> str:
    body = "".join(f"<tr><td>{i}</td><td>{r['role']}</td><td>{shown}</td></tr>"
                   for i, r in enumerate(rows) for shown in [_(r["reasoning"]) if r["reasoning"] else ""])
    head = "<tr><th>#</th><th>" + _("role") + "</th><th>" + _("reasoning") + "</th></tr>"
    return f"<table>{head}{body}</table>"


def stream_stepper(chunks: list[dict], history: list, tools=None):
    import ipywidgets as w

    slider = w.IntSlider(value=0, min=0, max=len(chunks), description=_("chunk"))
    policy = w.ToggleButtons(options=list(POLICIES), description=_("policy"))
    out, sent = w.HTML(), w.HTML()

    def refresh(change=None):
        out.value = state_html(state_at(chunks, slider.value, tools))
        sent.value = rows_html(next_request_rows(history, policy.value))

    slider.observe(refresh, "value")
    policy.observe(refresh, "value")
    refresh()
    return w.VBox([slider, out, policy, sent])
