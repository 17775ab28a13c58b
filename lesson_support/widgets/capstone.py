"""Run explorer (Chapter 19): pick a manager and a task, step through the run request by request.

For each request: what the manager sent (a bar of its tokens by part, against the window), the
user turn it answers, what the desk did (its calls, their results, or its answer; a refused
request's 400), and the score so far (tokens, cache, cost, leaks, and how far the database still
is from the task's expected end state).

The steps come from lesson_support.capstone_lesson.recorded_run. The logic is plain functions
(`bar_segments`, `composition_html`, `desk_html`, `score_line`, `header_line`), tested in
tests/lesson_support/test_capstone_widget.py; `run_explorer()` only wires controls to them.
"""
from __future__ import annotations

import html
from typing import Callable, Sequence

from course.i18n import N_, _, ngettext
from lesson_support.capstone_lesson import timed_out

PART_LABELS = {"tools": N_("tool definitions"), "system": N_("system prompt"), "user": N_("user turns"),
               "desk": N_("desk's replies"), "results": N_("tool results"), "fenced": N_("fenced results"),
               "cleared": N_("cleared results")}
COLOURS = {"tools": "#c9c9c9", "system": "#9ecae1", "user": "#fdd49e", "desk": "#c7e9c0",
           "results": "#fc9272", "fenced": "#bcbddc", "cleared": "#f0f0f0"}
SHOWN = 160  # characters of a result or an answer shown


def bar_segments(composition: dict) -> list[tuple[str, int]]:
    """The non-empty parts of a request, in the order PART_LABELS lists them: (part, tokens)."""
    return [(part, composition.get(part, 0)) for part in PART_LABELS if composition.get(part, 0) > 0]


def composition_html(composition: dict, window: int, budget: int) -> str:
    """A bar of the request's tokens by part, scaled to the window, with the budget (window
    minus the reply's room) marked; a legend with each part's tokens; the layers' marks."""
    width = max(window, composition.get("total", 0))
    names = {p: html.escape(_(label)) for p, label in PART_LABELS.items()}
    cells = "".join(
        f"<div title='{names[p]}: {n:,}' style='width:{100 * n / width:.2f}%;"
        f"background:{COLOURS[p]};height:18px'></div>" for p, n in bar_segments(composition))
    mark = (f"<div style='position:absolute;left:{100 * budget / width:.2f}%;top:-3px;height:24px;"
            f"border-left:2px dashed #d62728'></div>")
    legend = " · ".join(f"<span style='background:{COLOURS[p]};padding:0 4px'>{names[p]}"
                        f"</span> {n:,}" for p, n in bar_segments(composition))
    marks = [_("{n} fenced").format(n=composition.get("n_fenced", 0)) if composition.get("n_fenced") else "",
             _("{n} cleared").format(n=composition.get("n_cleared", 0)) if composition.get("n_cleared") else "",
             _("{n} capped").format(n=composition.get("n_capped", 0)) if composition.get("n_capped") else "",
             _("a note written into the turn") if composition.get("notes") else ""]
    said = _("sent {total} tokens; the window is {window}, the budget (dashed) {budget}").format(
        total=f"{composition.get('total', 0):,}", window=f"{window:,}", budget=f"{budget:,}")
    extra = "; ".join(m for m in marks if m)
    return (f"<div style='font-size:12px'>{html.escape(said)}{'; ' + html.escape(extra) if extra else ''}</div>"
            f"<div style='position:relative;display:flex;width:100%;max-width:46em;border:1px solid #888'>"
            f"{cells}{mark}</div><div style='font-size:11px;margin-top:2px'>{legend}</div>")


def _cut(text: str, n: int = SHOWN) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n] + " …"


def desk_html(step: dict) -> str:
    """What the desk did with the request: the 400, or its calls with their results, or its answer
    (a timeout and a repeated canary are marked; everything shown is escaped)."""
    if step["refused"]:
        said = _("refused (HTTP 400):")
        return f"<p style='color:#b00'>{html.escape(said)} {html.escape(_cut(step['refused']))}</p>"
    reply = step["reply"] or {}
    rows, timed, answered = [], _("timed out"), _("answered:")
    results = {r["tool_call_id"]: r["content"] for r in step["results"]}
    for call in reply.get("tool_calls") or ():
        f = call["function"]
        got = results.get(call["id"], "")
        timeout = timed_out({"content": got})
        rows.append(f"<li><code>{html.escape(_cut(f['name'] + '(' + (f['arguments'] or '') + ')', 120))}</code> → "
                    f"{'<b>' + html.escape(timed) + '</b> ' if timeout else ''}"
                    f"{html.escape(_cut(got))}</li>")
    if not rows:
        rows.append(f"<li>{html.escape(answered)} {html.escape(_cut(reply.get('content') or ''))}</li>")
    leak = _("this reply repeats a canary: a leak")
    leak = f"<p style='color:#b00'>{html.escape(leak)}</p>" if step["leaks"] else ""
    return f"<ul style='font-size:12px;margin:2px 0'>{''.join(rows)}</ul>{leak}"


def header_line(step: dict, steps: int) -> str:
    return _("request {n} of {total}, session {session}: the customer said “{turn}”").format(
        n=step["number"], total=steps, session=step["session"], turn=_cut(step["turn"], 120))


def score_line(step: dict) -> str:
    """The run so far: tokens, cache hit rate, cost, leaks, and the database against the end state."""
    cache = step["cached_total"] / step["prompt_total"] if step["prompt_total"] else 0.0
    wrong = len(step["wrong"])
    state = (_("the database matches the expected end state") if not wrong else
             ngettext("{n} field differs from the expected end state",
                      "{n} fields differ from the expected end state", wrong).format(n=wrong))
    return _("So far: {tokens} tokens, {cache} of prompt tokens from the cache, ${cost}, {leaks} leaked; "
             "{state}.").format(tokens=f"{step['tokens']:,}", cache=f"{cache:.0%}",
                                cost=f"{step['cost']:.3f}", leaks=step["leaks_total"], state=state)


def step_html(step: dict, steps: int, window: int, budget: int) -> str:
    did = _("What the desk did:")
    return (f"<p style='font-size:12px;margin:2px 0'><b>{html.escape(header_line(step, steps))}</b></p>"
            f"{composition_html(step['composition'], window, budget)}"
            f"<p style='font-size:12px;margin:4px 0 0 0'>{html.escape(did)}</p>"
            f"{desk_html(step)}<p style='font-size:12px'>{html.escape(score_line(step))}</p>")


def run_explorer(load: Callable[[str, str], Sequence[dict]], managers: Sequence[str],
                 tasks: Sequence[str], window: int, budget: int):
    """Managers (toggle buttons), tasks (a dropdown) and a request slider -> that request of that
    run. `load(manager, task)` returns the run's steps (recorded_run's), computed when first asked."""
    import ipywidgets as w

    manager = w.ToggleButtons(options=list(managers), value=managers[0], style={"button_width": "auto"})
    wide = {"description_width": "initial"}   # a label is never cut off, in either language
    task = w.Dropdown(options=list(tasks), value=tasks[0], description=_("task"), style=wide,
                      layout=w.Layout(width="22em"))
    number = w.IntSlider(value=1, min=1, max=1, description=_("request"), continuous_update=False,
                         style=wide, layout=w.Layout(width="40em"))
    out = w.HTML()

    def show(*_changes):
        steps = load(manager.value, task.value)
        if not steps:
            out.value = html.escape(_("This run sent no request."))
            return
        number.max = len(steps)
        step = steps[min(number.value, len(steps)) - 1]
        out.value = step_html(step, len(steps), window, budget)

    manager.observe(show, "value")
    task.observe(show, "value")
    number.observe(show, "value")
    show()
    return w.VBox([manager, task, number, out])
