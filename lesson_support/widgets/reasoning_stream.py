"""Step through a streamed reply delta by delta (Chapter 13): the reasoning, the text and each
call's arguments growing, the call the streaming loop could start, and, with a toggle for the
history policy, what the next request sends back of the reasoning.

The logic is in plain functions (tested in tests/lesson_support/test_reasoning_stream_widget.py);
the widget only wires controls.
"""
from __future__ import annotations

import html

from course.givens.reasoning_stream import FIELD, POLICIES
from lesson_support.reasoning_stream import delta_kind
from solutions.reasoning_stream import first_ready_call, history_for, parse_stream


def state_at(chunks: list[dict], n: int, tools=None) -> dict:
    """The reply after its first `n` chunks (clamped): the kind of chunk n, the message so far,
    and the first call that may start (its id, or None)."""
    n = max(0, min(n, len(chunks)))
    partial = parse_stream(chunks[:n])
    ready = first_ready_call(partial, tools)
    return {"n": n, "kind": delta_kind(chunks[n - 1]) if n else "nothing yet", "message": partial,
            "ready": ready["id"] if ready else None}


def next_request_rows(messages: list, policy: str) -> list[dict]:
    """For each message of the history: its role and whether the next request sends its
    reasoning under `policy` ("sent", "dropped", or "" for a message that never had any)."""
    out = history_for(policy, messages)
    rows = []
    for before, after in zip(messages, out):
        had = isinstance(before.get(FIELD), str)
        sends = isinstance(after.get(FIELD), str) and after.get(FIELD) != ""
        rows.append({"role": before.get("role"), "reasoning": "sent" if sends else "dropped" if had else ""})
    return rows


def state_html(state: dict) -> str:
    m = state["message"]
    calls = "".join(f"<li><code>{html.escape(c['function']['name'] or '?')}</code> "
                    f"<code>{html.escape(c['function']['arguments'])}</code></li>"
                    for c in m["tool_calls"] or [])
    return (f"<p>chunk {state['n']}: <b>{html.escape(state['kind'])}</b>; ready to start: "
            f"{html.escape(state['ready'] or 'none')}</p>"
            f"<pre>reasoning: {html.escape(m['reasoning_content'] or '')}</pre>"
            f"<pre>text: {html.escape(m['content'] or '')}</pre><ul>{calls}</ul>")


def rows_html(rows: list[dict]) -> str:
    body = "".join(f"<tr><td>{i}</td><td>{r['role']}</td><td>{r['reasoning']}</td></tr>"
                   for i, r in enumerate(rows))
    return f"<table><tr><th>#</th><th>role</th><th>reasoning</th></tr>{body}</table>"


def stream_stepper(chunks: list[dict], history: list, tools=None):
    import ipywidgets as w

    slider = w.IntSlider(value=0, min=0, max=len(chunks), description="chunk")
    policy = w.ToggleButtons(options=list(POLICIES), description="policy")
    out, sent = w.HTML(), w.HTML()

    def refresh(_=None):
        out.value = state_html(state_at(chunks, slider.value, tools))
        sent.value = rows_html(next_request_rows(history, policy.value))

    slider.observe(refresh, "value")
    policy.observe(refresh, "value")
    refresh()
    return w.VBox([slider, out, policy, sent])
