"""Status-bar replay (Chapter 08): step through the replayed run with the bar live.

Choose where the bar goes (none, system prompt, end of context), how it is kept current
(replace or append), and inject an error into the Xfinity counter. The widget shows the bar at
that step, the cached and uncached tokens of every request so far, and the teaching model's
answer to a fixed question with its trace. The logic is in plain functions (tested in
tests/lesson_support/test_status_bar_widget.py); `status_bar_replay()` only wires controls.
"""
from __future__ import annotations

import html
from functools import lru_cache

import course.llm
from course.i18n import N_, _
from lesson_support.status_bar import Run, load_run, replay_usage, request_messages, with_counter
from solutions.status_bar import render_status

QUESTION = "How many times did you call Xfinity?"
COUNTER = "call.Xfinity"
CHOICES = ((N_("no bar"), "none", "replace"), (N_("system prompt"), "system", "replace"),
           (N_("end, replace"), "end", "replace"), (N_("end, append"), "end", "append"))


def shown_status(run: Run, step: int, error: int = 0, at_follow_up: bool = False) -> dict:
    """The status the bar shows at request `step`, its Xfinity counter off by `error`
    (never below 0)."""
    status = run.status(step, follow_up=at_follow_up)
    if error:
        true = status["calls"].get(COUNTER, 0)
        status = with_counter(status, COUNTER, max(0, true + error))
    return status


@lru_cache(maxsize=16)
def _usage(run_name: str, placement: str, mode: str) -> tuple:
    run = load_run(run_name)
    with course.llm.serve() as server:  # a fresh prompt cache for each strategy
        records = replay_usage(run, server.client(), course.llm.MODEL_NAME, placement, mode)
    return tuple(records)


def usage(run: Run, placement: str, mode: str) -> list[dict]:
    """Usage records of every request of the run under one strategy (computed once; the bar's
    content is the true one, so an injected error does not change these counts)."""
    if placement == "none":
        mode = "replace"
    return [dict(r) for r in _usage(run.name, placement, "replace" if placement == "system" else mode)]


def ask(run: Run, step: int, placement: str, mode: str, error: int, client=None, model=None,
        question: str = QUESTION) -> tuple[str, str]:
    """(reply text, explanation) of the model asked `question` after `step` steps: by default the
    teaching model, even with a provider configured (the widget shows its rule's trace)."""
    client = client or course.llm.default_server().client()
    model = model or course.llm.MODEL_NAME
    messages = request_messages(run, step, placement, mode, follow_up=question,
                                status_of=lambda k, last=False: shown_status(run, k, error, last))
    reply = client.chat.completions.create(model=model, messages=messages, tools=run.tools)
    message = reply.choices[0].message
    if message.tool_calls:
        text = _("(calls {calls})").format(calls=", ".join(f"{c.function.name}({c.function.arguments})"
                                                           for c in message.tool_calls))
    else:
        text = message.content or ""
    return text, str(course.llm.explain(reply))


def step_view(run: Run, step: int, placement: str, mode: str, error: int = 0, client=None,
              model=None) -> dict:
    """Everything the widget shows at one step."""
    if not 1 <= step <= run.n_requests + 1:
        raise ValueError(f"step must be between 1 and {run.n_requests + 1}, got {step}")
    records = usage(run, placement, mode)[:step]
    answer, trace = ask(run, step, placement, mode, error, client, model)
    bar = None if placement == "none" else render_status(shown_status(run, step, error))
    return {"step": step, "bar": bar, "records": records, "answer": answer, "trace": trace,
            "cached": sum(r["cached_tokens"] for r in records),
            "prompt": sum(r["prompt_tokens"] for r in records)}


def cached_svg(records: list[dict], total_requests: int, width: int = 560, height: int = 120) -> str:
    """Bars per request: cached tokens (green) under uncached tokens (grey)."""
    top = max([r["prompt_tokens"] for r in records] + [1])
    w = width / max(total_requests, 1)
    bars = []
    for i, r in enumerate(records):
        x = i * w
        h_all = r["prompt_tokens"] / top * (height - 10)
        h_hit = r["cached_tokens"] / top * (height - 10)
        bars.append(f"<rect x='{x:.1f}' y='{height - h_all:.1f}' width='{max(w - 1, 1):.1f}' "
                    f"height='{h_all - h_hit:.1f}' fill='#bbb'/>"
                    f"<rect x='{x:.1f}' y='{height - h_hit:.1f}' width='{max(w - 1, 1):.1f}' "
                    f"height='{h_hit:.1f}' fill='#4a9'/>")
    return (f"<svg width='{width}' height='{height}' role='img' aria-label='cached tokens per "
            f"request'>{''.join(bars)}</svg>")


def view_html(view: dict, total_requests: int) -> str:
    rate = view["cached"] / view["prompt"] if view["prompt"] else 0.0
    bar = (f"<pre style='margin:0'>{html.escape(view['bar'])}</pre>" if view["bar"]
           else "<i>" + _("no bar in this context") + "</i>")
    head = _("{request}: {prompt} prompt tokens so far, {cached} cached ({rate})").format(
        request="<b>" + _("request {number}").format(number=view["step"]) + "</b>",
        prompt=f"{view['prompt']:,}", cached=f"{view['cached']:,}", rate=f"{rate:.0%}")
    return (f"<div>{head}</div>"
            f"{cached_svg(view['records'], total_requests)}"
            "<div style='font-size:90%'>" + _("green: cached, grey: not cached") + "</div>"
            f"<div><b>Q:</b> {html.escape(QUESTION)}<br><b>A:</b> {html.escape(view['answer'])}</div>"
            "<details><summary>" + _("why (the teaching model's trace)") + "</summary>"
            f"<pre>{html.escape(view['trace'])}</pre></details>{bar}")


def status_bar_replay(run: Run | None = None):
    """The widget: step slider, placement, counter error."""
    import ipywidgets as w

    run = run or load_run()
    last = run.n_requests + 1
    # Start just after the third call to Xfinity, with room to move either way.
    third = [i for i, step in enumerate(run.steps) for m in step["messages"]
             if any(c["function"]["name"] == "call" for c in m.get("tool_calls") or ())][-1:]
    start = min(third[0] + 2, last) if third else last
    step = w.IntSlider(value=start, min=1, max=last, description=_("request"), continuous_update=False)
    choice = w.Dropdown(options=[(_(label), (p, m)) for label, p, m in CHOICES], value=("end", "replace"),
                        description=_("bar"))
    error = w.IntSlider(value=0, min=-3, max=3, description=_("counter error"), continuous_update=False,
                        style={"description_width": "initial"})
    out = w.HTML()

    def update(change=None):
        placement, mode = choice.value
        out.value = view_html(step_view(run, step.value, placement, mode, error.value), last)

    for control in (step, choice, error):
        control.observe(update, names="value")
    update()
    return w.VBox([w.HBox([step, choice, error]), out])
