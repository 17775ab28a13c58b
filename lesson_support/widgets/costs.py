"""Cost calculator (Chapter 05): sliders and a provider preset drive a table of strategies and a
chart of the cumulative cost per step, with the step where compaction starts to pay.

The logic is in plain functions (tested in tests/lesson_support/test_costs_widget.py), built on
`solutions.costs`; `cost_calculator()` only wires controls to them. The "compact above" slider
follows the run's shape: it never offers a threshold below what a compaction leaves behind.
"""
from __future__ import annotations

import dataclasses
import html

from course.i18n import N_, _

from solutions.costs import (ANTHROPIC_RULES, COST_STRATEGIES, DEEPSEEK_RULES, EXACT, OPENAI_RULES,
                             SEED_RUN, Breakpoints, Caching, CostStrategy, Prices, Run, billed_prices,
                             break_even_step, cumulative_cost_by_step, default_threshold,
                             full_history_prompt, provider_presets, simulate, strategy_table)

RULES = {N_("every shared token (as the study guide)"): EXACT,
         N_("1,024 minimum, 128-token blocks (OpenAI)"): OPENAI_RULES,
         N_("64-token units (DeepSeek)"): DEEPSEEK_RULES,
         N_("Anthropic: prefix + end marked, 5-min TTL"): ANTHROPIC_RULES,
         N_("Anthropic: prefix + end marked, 1-hour TTL"): dataclasses.replace(ANTHROPIC_RULES,
                                                                               ttl="1h")}
BASELINE = CostStrategy.FULL_CACHED
CANDIDATE = CostStrategy.COMPACT_AT_THRESHOLD
# the run-shape sliders, in the order shown: (field, low, high, step, label)
RUN_SLIDERS = (("prefix_tokens", 0, 20_000, 100, N_("fixed prefix")),
               ("step_tokens", 100, 10_000, 100, N_("tokens per step")),
               ("steps", 2, 300, 1, N_("steps")),
               ("keep_recent", 0, 40, 1, N_("keep recent steps")),
               ("summary_tokens", 0, 5_000, 50, N_("summary tokens")),
               ("output_tokens", 0, 4_000, 50, N_("output per step")))
LABEL_STYLE = {"description_width": "10em"}  # wide enough for the longest slider label


def compacted_size(run: Run) -> int:
    """What a compaction leaves: prefix + summary + the recent steps (the lowest threshold)."""
    return run.prefix_tokens + run.summary_tokens + run.step_tokens * run.keep_recent


def threshold_range(run: Run) -> tuple[int, int]:
    """The thresholds worth choosing: from what a compaction leaves behind (lower is refused) to
    the largest request of the full history (higher never compacts)."""
    low = compacted_size(run)
    return low, max(low, full_history_prompt(run.steps, run))


def follow_threshold(run: Run, value: int, following: bool) -> int:
    """The threshold for a run whose shape just changed: the run's default while the user has
    not chosen one (`following`), else the chosen `value`; either moved into `threshold_range`,
    so the calculator never shows a threshold the run refuses."""
    low, high = threshold_range(run)
    return min(max(default_threshold(run) if following else value, low), high)


def cumulative_curves(run: Run, prices: Prices, rules: Caching = EXACT,
                      threshold: int | None = None,
                      summary_calls: bool = True) -> dict[CostStrategy, list[float]]:
    """{strategy: cumulative USD after each step}."""
    prices = billed_prices(prices, rules)
    return {s: cumulative_cost_by_step(simulate(s, run, rules, threshold, summary_calls), prices,
                                       run.steps) for s in COST_STRATEGIES}


def calculator_view(run: Run, prices: Prices, rules: Caching = EXACT,
                    threshold: int | None = None, summary_calls: bool = True) -> dict:
    """Everything the widget shows: table rows, curves, and the break-even step (or None)."""
    curves = cumulative_curves(run, prices, rules, threshold, summary_calls)
    return {"rows": strategy_table(run, prices, rules, threshold, summary_calls),
            "curves": curves,
            "break_even": break_even_step(curves[BASELINE], curves[CANDIDATE]),
            "threshold": default_threshold(run) if threshold is None else threshold,
            "prices": billed_prices(prices, rules),
            "rules": rules}


CELL = "padding:2px 12px"  # room between the columns, headers included


def _caching_note(rules: Caching) -> str:
    if not isinstance(rules, Breakpoints):
        return ""
    return _("; cache_control at {places}, {ttl} TTL, a step every {seconds} s").format(
        places=_(" and ").join(rules.at), ttl=rules.ttl, seconds=f"{rules.seconds_between_steps:,g}")


def table_html(view: dict) -> str:
    prices = view["prices"]
    names = (_("strategy"), _("input tokens"), _("hit rate"), _("last request"), _("calls"), "USD")
    head = "<tr>" + "".join(
        f"<th style='{CELL};text-align:{'left' if i == 0 else 'right'}'>{name}</th>"
        for i, name in enumerate(names)) + "</tr>"
    body = "".join(
        f"<tr><td style='{CELL};text-align:left'>{html.escape(r['strategy'])}</td>"
        + "".join(f"<td style='{CELL}'>{cell}</td>" for cell in (
            f"{r['input_tokens']:,}", f"{r['hit_rate']:.1%}", f"{r['last_prompt']:,}",
            f"{r['calls']}", f"{r['usd']:.4f}")) + "</tr>" for r in view["rows"])
    steps = len(view["curves"][BASELINE])
    threshold = f"{view['threshold']:,}"
    if view["break_even"] is None:
        verdict = _("Compacting at {threshold} tokens does not pay within {steps} steps against "
                    "the full, cached history.").format(threshold=threshold, steps=steps)
    else:
        verdict = _("Compacting at {threshold} tokens is cheaper than the full, cached history "
                    "from step {step} on.").format(threshold=threshold, step=view["break_even"])
    premium = (_("; cache writes {price}").format(price=f"{prices.cache_write:g}")
               if prices.has_write_premium else "")
    note = _caching_note(view.get("rules"))
    name = "<b>" + html.escape(prices.name or _("custom prices")) + "</b>"
    per_million = _("{name}: USD per million tokens input {input}, cached {cached}, output "
                    "{output}").format(name=name, input=f"{prices.input:g}",
                                       cached=f"{prices.cached_input:g}", output=f"{prices.output:g}")
    return (f"<div>{per_million}"
            f"{premium}{html.escape(note)}</div>"
            f"<table style='text-align:right;border-collapse:collapse'>{head}{body}</table>"
            f"<div>{html.escape(verdict)}</div>")


def cost_figure(view: dict, title: str = ""):
    """Cumulative USD per step for every strategy, the break-even step marked."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    for strategy, curve in view["curves"].items():
        ax.plot(range(1, len(curve) + 1), curve, label=strategy.label)
    step = view["break_even"]
    if step is not None:
        ax.axvline(step, color="grey", linestyle="--")
        ax.annotate(_("compaction pays from step {step}").format(step=step), (step, view["curves"][CANDIDATE][step - 1]),
                    textcoords="offset points", xytext=(6, 12), fontsize=9)
    ax.set_xlabel(_("step"))
    # The strategies differ by orders of magnitude: a log scale keeps the cheap ones readable.
    if all(curve[0] > 0 for curve in view["curves"].values()):
        ax.set_yscale("log")
        ax.set_ylabel(_("cumulative cost (USD, log scale)"))
    else:
        ax.set_ylabel(_("cumulative cost (USD)"))
    ax.set_title(title or _("Cumulative cost of the run"))
    ax.legend(fontsize=8)
    return fig


def cost_calculator(run: Run = SEED_RUN):
    """Sliders for the run, a provider preset and cache rules -> table and chart."""
    import ipywidgets as widgets
    from IPython.display import display

    presets = provider_presets()

    def slider(value, low, high, step, label):
        return widgets.IntSlider(value=value, min=low, max=high, step=step, description=_(label),
                                 continuous_update=False, readout_format=",", style=LABEL_STYLE,
                                 layout=widgets.Layout(width="32em"))

    controls = {name: slider(getattr(run, name), low, high, step, label)
                for name, low, high, step, label in RUN_SLIDERS}
    low, high = threshold_range(run)
    controls["threshold"] = slider(follow_threshold(run, 0, following=True), low, high, 100,
                                   N_("compact above"))
    pace = slider(30, 0, 7_200, 30, N_("seconds per step"))  # what a TTL is measured against
    provider = widgets.Dropdown(options=list(presets), description=_("prices"), style=LABEL_STYLE,
                                layout=widgets.Layout(width="40em"))
    # shown in the course's language, valued by the English name RULES is keyed by
    rules = widgets.Dropdown(options=[(_(name), name) for name in RULES], description=_("cache"),
                             style=LABEL_STYLE, layout=widgets.Layout(width="40em"))
    summaries = widgets.Checkbox(value=True, description=_("count the summarising calls"),
                                 indent=False, style={"description_width": "initial"},
                                 layout=widgets.Layout(width="auto"))
    table, chart = widgets.HTML(), widgets.Output()
    state = {"following": True, "syncing": False}  # following: the threshold is the default

    def shape() -> Run:
        return Run(**{name: controls[name].value for name, *_ in RUN_SLIDERS})

    def follow(new: Run):
        """Move the threshold slider with the run: its new range, and a value inside it."""
        threshold = controls["threshold"]
        value = follow_threshold(new, threshold.value, state["following"])
        low, high = threshold_range(new)
        state["syncing"] = True  # the slider's own events must not redraw half-way
        try:
            threshold.min, threshold.max = min(threshold.min, low), max(threshold.max, high)
            threshold.value = value
            threshold.min, threshold.max = low, high
        finally:
            state["syncing"] = False

    def update(change=None):
        if state["syncing"]:
            return
        try:
            new = shape()
            if change is not None and change["owner"] is controls["threshold"]:
                state["following"] = False  # the user chose a threshold: keep it from now on
            elif change is not None:
                follow(new)
            caching = RULES[rules.value]
            if isinstance(caching, Breakpoints):
                caching = dataclasses.replace(caching, seconds_between_steps=pace.value)
            view = calculator_view(new, presets[provider.value], caching,
                                   controls["threshold"].value, summaries.value)
        except ValueError as exc:  # a shape or threshold the model refuses: say why
            table.value = f"<div style='color:#b00'>{html.escape(str(exc))}</div>"
            chart.clear_output()
            return
        table.value = table_html(view)
        with chart:
            chart.clear_output(wait=True)
            display(cost_figure(view, _("{prices}, {steps} steps").format(prices=provider.value,
                                                                           steps=new.steps)))

    for control in [*controls.values(), pace, provider, rules, summaries]:
        control.observe(update, names="value")
    update()
    return widgets.VBox([widgets.HBox([widgets.VBox(list(controls.values())),
                                       widgets.VBox([provider, rules, pace, summaries])]),
                         table, chart])
