"""GSSC explorer (Chapter 03): move the budget and the weights, and watch which candidate
packets make it into the context.

Shown: a table of every candidate (source, section, exact tokens, relevance, recency, score,
and what happened to it), a bar chart of how the budget is spent by section, and the rendered
context itself. The logic is in plain functions (tested in
tests/lesson_support/test_gssc_widget.py) built on `solutions.gssc`; `gssc_explorer()` only
wires controls to them.
"""
from __future__ import annotations

import html

from course.givens.gssc import sample_candidates, sample_tasks
from course.i18n import N_, _
from solutions.gssc import SECTIONS, BudgetError, Built, ContextConfig, Packet, build_context

# a candidate's status (solutions.gssc's words, translated where shown) and its colour
STATUS_COLOURS = {N_("pinned"): "#6b7280", N_("selected"): "#059669", N_("did not fit"): "#d97706",
                  N_("below min relevance"): "#9ca3af", N_("redundant"): "#7c3aed",
                  N_("cut"): "#dc2626"}


def preview(text: str, width: int = 70) -> str:
    """The first line of a text, shortened to `width` characters."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def candidate_rows(built: Built) -> list[dict]:
    """One row per candidate, best first: pinned, then selected in order of choice, then the
    rest by score."""
    def order(row):
        group = {"pinned": 0, "selected": 1}.get(row.status, 2)
        return (group, row.rank if row.rank is not None else 0, -(row.score or 0.0))

    return [{"source": r.packet.source, "section": r.packet.section, "tokens": r.packet.tokens,
             "relevance": r.relevance, "recency": r.recency, "score": r.score,
             "status": r.status, "preview": preview(r.packet.content)}
            for r in sorted(built.rows, key=order)]


def budget_bars(built: Built, config: ContextConfig) -> dict[str, int]:
    """How the whole budget is spent: tokens per section, what is left unused, and the
    reserve kept for the answer. The values add up to `config.budget`."""
    bars = {name: built.sections[name] for name in SECTIONS}
    bars[N_("unused")] = config.limit - built.tokens
    bars[N_("reserve (answer)")] = config.reserve
    return bars


def explorer_view(task: str, packets: list[Packet], config: ContextConfig) -> dict:
    """Everything the widget shows, or the error that stopped the build."""
    try:
        built = build_context(task, packets, config)
    except BudgetError as exc:
        return {"error": str(exc), "built": None, "rows": [], "bars": {}}
    return {"error": None, "built": built, "rows": candidate_rows(built),
            "bars": budget_bars(built, config)}


def _number(value, digits=2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def status(row: dict) -> str:
    """A candidate's status as shown: in the course's language."""
    return _(row["status"])


def table_html(rows: list[dict]) -> str:
    head = ("<tr>" + "".join(f"<th>{name}</th>" for name in (
        _("source"), _("section"), _("tokens"), _("relevance"), _("recency"), _("score"),
        _("status"))) + "<th style='text-align:left'>" + _("content") + "</th></tr>")
    body = "".join(
        f"<tr><td>{html.escape(r['source'])}</td><td>{html.escape(r['section'])}</td>"
        f"<td>{r['tokens']:,}</td><td>{_number(r['relevance'])}</td><td>{_number(r['recency'])}</td>"
        f"<td>{_number(r['score'], 3)}</td>"
        f"<td style='color:{STATUS_COLOURS.get(r['status'], '#111')}'><b>{html.escape(status(r))}</b></td>"
        f"<td style='text-align:left'>{html.escape(r['preview'])}</td></tr>" for r in rows)
    return f"<table style='font-size:12px;text-align:right'>{head}{body}</table>"


def summary_line(view: dict, config: ContextConfig) -> str:
    if view["error"]:
        return ("<div style='color:#b00'><b>" + _("Budget error:")
                + f"</b> {html.escape(view['error'])}</div>")
    built = view["built"]
    counts = {}
    for row in view["rows"]:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    parts = _(", ").join(_("{count} {status}").format(count=n, status=_(name))
                         for name, n in counts.items())
    cut = _(" Compress cut entries (see the [cut] lines).") if built.cuts else ""
    line = _("Context: {tokens} of {limit} tokens (budget {budget} − reserve {reserve}). "
             "Candidates: {candidates}.").format(
        tokens=f"<b>{built.tokens:,}</b>", limit=f"{config.limit:,}", budget=f"{config.budget:,}",
        reserve=f"{config.reserve:,}", candidates=parts)
    return f"<div>{line}{cut}</div>"


def budget_figure(bars: dict[str, int], title: str = ""):
    """Horizontal bars: tokens per section, unused room and the answer's reserve."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 3))
    ax = fig.subplots()
    names = list(bars)[::-1]
    colours = ["#9ca3af" if n == "reserve (answer)" else "#e5e7eb" if n == "unused" else "#2563eb"
               for n in names]
    ax.barh([_(n) for n in names], [bars[n] for n in names], color=colours)
    for y, n in enumerate(names):
        ax.annotate(f"{bars[n]:,}", (bars[n], y), xytext=(3, 0), textcoords="offset points",
                    va="center", fontsize=8)
    ax.set_xlabel(_("tokens"))
    ax.set_title(title or _("Where the budget goes"))
    fig.tight_layout()
    return fig


def context_html(text: str) -> str:
    return (f"<pre style='white-space:pre-wrap;font-size:12px;border:1px solid #ddd;"
            f"padding:6px'>{html.escape(text)}</pre>")


def gssc_explorer(packets: list[Packet] | None = None, tasks: list[str] | None = None,
                  config: ContextConfig | None = None):
    """Sliders for the budget and the weights, a task picker -> table, chart and context."""
    import ipywidgets as widgets
    from IPython.display import display

    packets = sample_candidates() if packets is None else packets
    tasks = sample_tasks() if tasks is None else tasks
    config = config or ContextConfig(budget=1500, reserve=300)
    wide = {"style": {"description_width": "9em"}, "layout": widgets.Layout(width="30em"),
            "continuous_update": False}
    task = widgets.Dropdown(options=tasks, description=_("task"), style={"description_width": "9em"},
                            layout=widgets.Layout(width="48em"))
    controls = {
        "budget": widgets.IntSlider(value=config.budget, min=100, max=8000, step=50,
                                    description=_("budget"), **wide),
        "reserve": widgets.IntSlider(value=config.reserve, min=0, max=2000, step=50,
                                     description=_("answer reserve"), **wide),
        "relevance_weight": widgets.FloatSlider(value=config.relevance_weight, min=0, max=1,
                                                step=0.05, description=_("relevance weight"), **wide),
        "recency_weight": widgets.FloatSlider(value=config.recency_weight, min=0, max=1, step=0.05,
                                              description=_("recency weight"), **wide),
        "min_relevance": widgets.FloatSlider(value=config.min_relevance, min=0, max=1, step=0.05,
                                             description=_("min relevance"), **wide),
        "diversity": widgets.FloatSlider(value=config.diversity, min=0, max=1, step=0.1,
                                         description=_("diversity"), **wide),
    }
    summary, table, chart, context = (widgets.HTML(), widgets.HTML(), widgets.Output(),
                                      widgets.HTML())

    def update(change=None):
        try:
            cfg = ContextConfig(**{k: c.value for k, c in controls.items()},
                                half_life_hours=config.half_life_hours)
        except ValueError as exc:  # e.g. a reserve as large as the budget
            summary.value = f"<div style='color:#b00'>{html.escape(str(exc))}</div>"
            table.value = context.value = ""
            chart.clear_output()
            return
        view = explorer_view(task.value, packets, cfg)
        summary.value = summary_line(view, cfg)
        table.value = table_html(view["rows"])
        context.value = context_html(view["built"].text) if view["built"] else ""
        with chart:
            chart.clear_output(wait=True)
            if view["bars"]:
                display(budget_figure(view["bars"], _("{budget}-token budget").format(
                    budget=f"{cfg.budget:,}")))

    for control in [task, *controls.values()]:
        control.observe(update, names="value")
    update()
    left = widgets.VBox([task, *controls.values()])
    return widgets.VBox([left, summary, widgets.HBox([chart]), table, context])
