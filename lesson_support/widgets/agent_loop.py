"""Chapter 01 widget: step through an agent run one API call at a time.

Left: the messages the request sent. Right: what the model answered. Above: how many messages
and prompt tokens that call carried — watch both grow, because every call resends everything.
The logic (`record_run`, `step_html`) is plain functions, tested in
tests/answers/test_agent_loop.py.
"""
from __future__ import annotations

import html
from types import SimpleNamespace

ROLE_COLOURS = {"system": "#6b7280", "developer": "#6b7280", "user": "#2563eb",
                "assistant": "#059669", "tool": "#b45309"}


class RecordingClient:
    """Looks like an openai client to `run_agent`, and records every request and reply."""

    def __init__(self, client):
        self.steps: list[dict] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))
        self._client = client

    def _create(self, **kwargs):
        from solutions.agent_loop import as_dict

        reply = self._client.chat.completions.create(**kwargs)
        self.steps.append({"request": [dict(m) for m in kwargs["messages"]],
                           "reply": as_dict(reply.choices[0].message),
                           "prompt_tokens": reply.usage.prompt_tokens,
                           "completion_tokens": reply.usage.completion_tokens})
        return reply


def record_run(client, messages: list, tools: list, execute_tool, max_iterations: int = 10,
               model: str | None = None) -> list[dict]:
    """Run an agent and keep, for each API call, the request's messages and the reply."""
    from solutions.agent_loop import run_agent

    recorder = RecordingClient(client)
    run_agent(recorder, messages, tools, execute_tool, max_iterations, model)
    return recorder.steps


def message_html(message: dict) -> str:
    role = message.get("role", "?")
    colour = ROLE_COLOURS.get(role, "#111827")
    parts = []
    if message.get("content"):
        parts.append(html.escape(str(message["content"])))
    for call in message.get("tool_calls") or ():
        fn = call.get("function", {})
        parts.append(f"call <code>{html.escape(fn.get('name', ''))}"
                     f"({html.escape(fn.get('arguments', ''))})</code> "
                     f"<small>id={html.escape(call.get('id', ''))}</small>")
    if role == "tool":
        parts.insert(0, f"<small>answers {html.escape(message.get('tool_call_id', ''))}</small>")
    body = "<br>".join(parts) or "<i>(empty)</i>"
    return (f'<div style="border-left:4px solid {colour};padding:2px 8px;margin:4px 0;'
            f'white-space:pre-wrap;font-size:12px"><b style="color:{colour}">{role}</b><br>{body}</div>')


def step_summary(steps: list[dict], index: int) -> str:
    step = steps[index]
    return (f"API call {index + 1} of {len(steps)}: sent {len(step['request'])} messages, "
            f"{step['prompt_tokens']} prompt tokens; got back "
            + (f"{len(step['reply'].get('tool_calls') or [])} tool call(s)"
               if step["reply"].get("tool_calls") else "the final answer"))


def step_html(steps: list[dict], index: int) -> str:
    step = steps[index]
    left = "".join(message_html(m) for m in step["request"])
    right = message_html(step["reply"])
    return ('<div style="display:flex;gap:12px">'
            f'<div style="flex:3"><h4>Request: messages sent</h4>{left}</div>'
            f'<div style="flex:2"><h4>Response</h4>{right}</div></div>')


def agent_stepper(steps: list[dict]):
    """The widget: Previous / Next buttons, a call counter, the request and the response."""
    import ipywidgets as w

    if not steps:
        raise ValueError("no API calls were recorded: nothing to step through")
    state = {"i": 0}
    label = w.HTML()
    view = w.HTML()
    prev_button = w.Button(description="◀ Previous")
    next_button = w.Button(description="Next ▶")

    def show():
        i = state["i"]
        label.value = f"<b>{html.escape(step_summary(steps, i))}</b>"
        view.value = step_html(steps, i)
        prev_button.disabled = i == 0
        next_button.disabled = i == len(steps) - 1

    def move(delta):
        state["i"] = min(max(state["i"] + delta, 0), len(steps) - 1)
        show()

    prev_button.on_click(lambda _: move(-1))
    next_button.on_click(lambda _: move(1))
    show()
    return w.VBox([w.HBox([prev_button, next_button, label]), view])
