"""Chapter 01 widget: step through an agent run one API call at a time.

Left: the messages the request sent. Right: what the model answered. Above: which run is shown
(the happy path, or the stuck run that the iteration limit stops) and how many messages and
prompt tokens that call carried — watch both grow, because every call resends everything. A
tool call that repeats one the run already made (same tool, same arguments) is marked: that
is what being stuck looks like from the inside.

The logic (`record_run`, `repeated_calls`, `run_outcome`, `step_summary`, `step_html`,
`move`) is plain functions, tested in tests/lesson_support/test_agent_loop_widget.py.
"""
from __future__ import annotations

import html
from types import SimpleNamespace

from course.i18n import _, ngettext

ROLE_COLOURS = {"system": "#6b7280", "developer": "#6b7280", "user": "#2563eb",
                "assistant": "#059669", "tool": "#b45309"}
REPEAT_COLOUR = "#dc2626"


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


def call_key(call: dict) -> tuple[str, str]:
    """What makes two tool calls the same request: the tool and its arguments (not the id)."""
    fn = call.get("function") or {}
    return fn.get("name", ""), fn.get("arguments", "")


def repeated_calls(step: dict) -> list[str]:
    """The ids of the reply's tool calls that repeat a call already in the request's history."""
    earlier = {call_key(c) for m in step["request"] for c in m.get("tool_calls") or ()}
    return [c.get("id", "") for c in step["reply"].get("tool_calls") or ()
            if call_key(c) in earlier]


def run_outcome(steps: list[dict]) -> str:
    """How the run ended. `run_agent` stops on a reply without tool calls, so a last reply that
    still asks for tools means the iteration limit stopped it."""
    if not steps:
        return _("no API calls")
    calls = ngettext("{count} API call", "{count} API calls", len(steps)).format(count=len(steps))
    if steps[-1]["reply"].get("tool_calls"):
        return _("stopped by the iteration limit after {calls}, still asking for tools").format(
            calls=calls)
    return _("answered after {calls}").format(calls=calls)


def message_html(message: dict, repeats: frozenset[str] = frozenset()) -> str:
    role = message.get("role", "?")
    colour = ROLE_COLOURS.get(role, "#111827")
    parts = []
    if message.get("content"):
        parts.append(html.escape(str(message["content"])))
    for call in message.get("tool_calls") or ():
        fn = call.get("function", {})
        repeat = (f' <b style="color:{REPEAT_COLOUR}">' + _("repeats an earlier call") + "</b>"
                  if call.get("id") in repeats else "")
        code = f"<code>{html.escape(fn.get('name', ''))}({html.escape(fn.get('arguments', ''))})</code>"
        parts.append(_("call {call}").format(call=code)
                     + f" <small>id={html.escape(call.get('id', ''))}</small>{repeat}")
    if role == "tool":
        answered = html.escape(message.get('tool_call_id', ''))
        parts.insert(0, "<small>" + _("answers {call_id}").format(call_id=answered) + "</small>")
    body = "<br>".join(parts) or "<i>" + _("(empty)") + "</i>"
    return (f'<div style="border-left:4px solid {colour};padding:2px 8px;margin:4px 0;'
            f'white-space:pre-wrap;font-size:12px"><b style="color:{colour}">{role}</b><br>{body}</div>')


def step_summary(steps: list[dict], index: int) -> str:
    step = steps[index]
    calls = step["reply"].get("tool_calls") or []
    if not calls:
        reply = _("the final answer")
    else:
        reply = _("{calls} tool call(s)").format(calls=len(calls))
        repeats = len(repeated_calls(step))
        if repeats:
            reply += _(", {repeats} of them repeating an earlier call").format(repeats=repeats)
        if index == len(steps) - 1:
            reply += _("; the limit stops the run here")
    return _("API call {number} of {total}: sent {messages} messages, {tokens} prompt tokens; "
             "got back {reply}").format(number=index + 1, total=len(steps),
                                        messages=len(step["request"]),
                                        tokens=step["prompt_tokens"], reply=reply)


def step_html(steps: list[dict], index: int) -> str:
    step = steps[index]
    left = "".join(message_html(m) for m in step["request"])
    right = message_html(step["reply"], frozenset(repeated_calls(step)))
    return ('<div style="display:flex;gap:12px">'
            '<div style="flex:3"><h4>' + _("Request: messages sent") + f'</h4>{left}</div>'
            '<div style="flex:2"><h4>' + _("Response") + f'</h4>{right}</div></div>')


def move(index: int, delta: int, count: int) -> int:
    """The call shown after pressing Previous (-1) or Next (+1): never before the first call or
    past the last one."""
    return min(max(index + delta, 0), count - 1)


def as_runs(runs) -> dict[str, list[dict]]:
    """Accept one recorded run (a list of steps) or several by name; refuse an empty one."""
    named = {"run": runs} if isinstance(runs, list) else dict(runs)
    if not named:
        raise ValueError("no runs given: nothing to step through")
    for name, steps in named.items():
        if not steps:
            raise ValueError(f"run {name!r} recorded no API calls: nothing to step through")
    return named


def agent_stepper(runs):
    """The widget: a choice of run (when there are several), Previous / Next buttons, a call
    counter, the request and the response. `runs` is one recorded run, or a dict of runs by
    name, e.g. {"happy path": ..., "stuck run": ...}."""
    import ipywidgets as w

    runs = as_runs(runs)
    state = {"run": next(iter(runs)), "i": 0}
    choice = w.ToggleButtons(options=list(runs), value=state["run"])
    outcome = w.HTML()
    label = w.HTML()
    view = w.HTML()
    prev_button = w.Button(description=_("◀ Previous"))
    next_button = w.Button(description=_("Next ▶"))

    def show():
        steps, i = runs[state["run"]], state["i"]
        outcome.value = f"<i>{html.escape(state['run'])}: {html.escape(run_outcome(steps))}</i>"
        label.value = f"<b>{html.escape(step_summary(steps, i))}</b>"
        view.value = step_html(steps, i)
        prev_button.disabled = i == 0
        next_button.disabled = i == len(steps) - 1

    def step(delta):
        state["i"] = move(state["i"], delta, len(runs[state["run"]]))
        show()

    def choose(change):
        state["run"], state["i"] = change["new"], 0  # a new run starts at its first call
        show()

    prev_button.on_click(lambda _: step(-1))
    next_button.on_click(lambda _: step(1))
    choice.observe(choose, names="value")
    show()
    top = w.HBox([choice, outcome]) if len(runs) > 1 else outcome
    return w.VBox([top, w.HBox([prev_button, next_button, label]), view])
