"""Three strategies on one run (Chapter 14): chapter 11's own layers, the server's compaction and
context editing. Slide through the requests and see each strategy's tokens, the cached tokens of
the last request it sent, the probes the model could still answer from its context and the
compactions or edits so far.

The measurements come from `lesson_support.provider_context.replay_strategy`; the logic is in
plain functions (tested in tests/lesson_support/test_provider_context_widget.py); the widget only
wires controls.
"""
from __future__ import annotations

import html

from course.i18n import _


def row_at(m, j: int) -> dict:
    """Strategy `m` at request j (1-based, clamped to the run): its tokens, the prompt and cached
    tokens of the last request sent at or before j (None before the first), the probes visible,
    the compactions so far and the requests whose cached prefix an edit broke so far."""
    j = max(1, min(j, len(m.sizes)))
    sent = [(k, prompt, cached) for k, prompt, cached in m.sent if k <= j]
    last = sent[-1] if sent else None
    return {"strategy": m.config, "request": j, "tokens": m.sizes[j - 1],
            "sent_prompt": last[1] if last else None, "sent_cached": last[2] if last else None,
            "visible": m.visible[j - 1], "compactions": sum(k <= j for k, _, _ in m.compactions),
            "breaks": sum(x > 0 for x in m.lost[:j])}


def rows_at(results: dict, j: int) -> list[dict]:
    return [row_at(m, j) for m in results.values()]


def table_html(rows: list[dict], probes: int) -> str:
    head = "<tr>" + "".join(f"<th>{name}</th>" for name in (
        _("strategy"), _("tokens"), _("last sent: prompt"), _("cached"), _("probes visible"),
        _("compactions"), _("cache breaks"))) + "</tr>"
    body = "".join(
        f"<tr><td>{html.escape(r['strategy'])}</td><td>{r['tokens']:,}</td>"
        f"<td>{'-' if r['sent_prompt'] is None else format(r['sent_prompt'], ',')}</td>"
        f"<td>{'-' if r['sent_cached'] is None else format(r['sent_cached'], ',')}</td>"
        f"<td>{r['visible']}/{probes}</td><td>{r['compactions']}</td><td>{r['breaks']}</td></tr>" for r in rows)
    return f"<table>{head}{body}</table>"


def provider_context_explorer(results: dict, run, window: int = 32_000):
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from IPython.display import HTML, display

    from lesson_support.widgets.production_compaction import sawtooth_figure  # chapter 11's plot

    probes = sum(p["how"] == "visible" for p in run.probes)
    n = len(next(iter(results.values())).sizes)
    step = w.IntSlider(value=n, min=1, max=n, description=_("request"))
    out = w.Output()

    def show(*changes):
        with out:
            out.clear_output(wait=True)
            sawtooth_figure(results, list(results), window, step.value)
            plt.show()
            display(HTML(table_html(rows_at(results, step.value), probes)))

    step.observe(show, "value")
    show()
    return w.VBox([step, out])
