"""Cost calculator (Chapter 05): sliders and a provider preset drive a table of strategies and a
chart of the cumulative cost per step, with the step where compaction starts to pay.

The logic is in plain functions (tested in tests/answers/test_costs.py) built on `solutions.costs`;
`cost_calculator()` only wires controls to them.
"""
from __future__ import annotations

import html

from solutions.costs import (COST_STRATEGIES, EXACT, OPENAI_RULES, SEED_RUN, CacheRules,
                             CostStrategy, Prices, Run, break_even_step, cumulative_cost_by_step,
                             default_threshold, provider_presets, simulate, strategy_table)

RULES = {"every shared token (as the study guide)": EXACT,
         "1,024 minimum, 128-token blocks (OpenAI)": OPENAI_RULES}
BASELINE = CostStrategy.FULL_CACHED
CANDIDATE = CostStrategy.COMPACT_AT_THRESHOLD


def cumulative_curves(run: Run, prices: Prices, rules: CacheRules = EXACT,
                      threshold: int | None = None,
                      summary_calls: bool = True) -> dict[CostStrategy, list[float]]:
    """{strategy: cumulative USD after each step}."""
    return {s: cumulative_cost_by_step(simulate(s, run, rules, threshold, summary_calls), prices,
                                       run.steps) for s in COST_STRATEGIES}


def calculator_view(run: Run, prices: Prices, rules: CacheRules = EXACT,
                    threshold: int | None = None, summary_calls: bool = True) -> dict:
    """Everything the widget shows: table rows, curves, and the break-even step (or None)."""
    curves = cumulative_curves(run, prices, rules, threshold, summary_calls)
    return {"rows": strategy_table(run, prices, rules, threshold, summary_calls),
            "curves": curves,
            "break_even": break_even_step(curves[BASELINE], curves[CANDIDATE]),
            "threshold": default_threshold(run) if threshold is None else threshold,
            "prices": prices}


def table_html(view: dict) -> str:
    prices = view["prices"]
    head = ("<tr><th style='text-align:left'>strategy</th><th>input tokens</th><th>hit rate</th>"
            "<th>last request</th><th>calls</th><th>USD</th></tr>")
    body = "".join(
        f"<tr><td style='text-align:left'>{html.escape(r['strategy'])}</td>"
        f"<td>{r['input_tokens']:,}</td><td>{r['hit_rate']:.1%}</td><td>{r['last_prompt']:,}</td>"
        f"<td>{r['calls']}</td><td>{r['usd']:.4f}</td></tr>" for r in view["rows"])
    steps = len(view["curves"][BASELINE])
    if view["break_even"] is None:
        verdict = (f"Compacting at {view['threshold']:,} tokens does not pay within {steps} steps "
                   f"against the full, cached history.")
    else:
        verdict = (f"Compacting at {view['threshold']:,} tokens is cheaper than the full, cached "
                   f"history from step {view['break_even']} on.")
    premium = (f"; cache writes {prices.cache_write:g}" if prices.has_write_premium else "")
    return (f"<div><b>{html.escape(prices.name or 'custom prices')}</b>: USD per million tokens "
            f"input {prices.input:g}, cached {prices.cached_input:g}, output {prices.output:g}"
            f"{premium}</div><table style='text-align:right'>{head}{body}</table>"
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
        ax.annotate(f"compaction pays from step {step}", (step, view["curves"][CANDIDATE][step - 1]),
                    textcoords="offset points", xytext=(6, 12), fontsize=9)
    ax.set_xlabel("step")
    # The strategies differ by orders of magnitude: a log scale keeps the cheap ones readable.
    if all(curve[0] > 0 for curve in view["curves"].values()):
        ax.set_yscale("log")
        ax.set_ylabel("cumulative cost (USD, log scale)")
    else:
        ax.set_ylabel("cumulative cost (USD)")
    ax.set_title(title or "Cumulative cost of the run")
    ax.legend(fontsize=8)
    return fig


def cost_calculator(run: Run = SEED_RUN):
    """Sliders for the run, a provider preset and cache rules -> table and chart."""
    import ipywidgets as widgets
    from IPython.display import display

    presets = provider_presets()
    def slider(value, low, high, step, label):
        return widgets.IntSlider(value=value, min=low, max=high, step=step, description=label,
                                 continuous_update=False, style={"description_width": "10em"},
                                 layout=widgets.Layout(width="32em"))

    controls = {
        "prefix_tokens": slider(run.prefix_tokens, 0, 20_000, 100, "fixed prefix"),
        "step_tokens": slider(run.step_tokens, 100, 10_000, 100, "tokens per step"),
        "steps": slider(run.steps, 2, 300, 1, "steps"),
        "keep_recent": slider(run.keep_recent, 0, 40, 1, "keep recent steps"),
        "summary_tokens": slider(run.summary_tokens, 0, 5_000, 50, "summary tokens"),
        "output_tokens": slider(run.output_tokens, 0, 4_000, 50, "output per step"),
        "threshold": slider(default_threshold(run), 1_000, 400_000, 500, "compact above"),
    }
    provider = widgets.Dropdown(options=list(presets), description="prices",
                                style={"description_width": "10em"},
                                layout=widgets.Layout(width="40em"))
    rules = widgets.Dropdown(options=list(RULES), description="cache reports",
                             style={"description_width": "10em"},
                             layout=widgets.Layout(width="40em"))
    summaries = widgets.Checkbox(value=True, description="count the calls that write summaries")
    table, chart = widgets.HTML(), widgets.Output()

    def update(_=None):
        try:
            shape = Run(**{k: c.value for k, c in controls.items() if k != "threshold"})
            view = calculator_view(shape, presets[provider.value], RULES[rules.value],
                                   controls["threshold"].value, summaries.value)
        except ValueError as exc:  # e.g. a threshold below what a compaction leaves behind
            table.value = f"<div style='color:#b00'>{html.escape(str(exc))}</div>"
            chart.clear_output()
            return
        table.value = table_html(view)
        with chart:
            chart.clear_output(wait=True)
            display(cost_figure(view, f"{provider.value}, {shape.steps} steps"))

    for control in [*controls.values(), provider, rules, summaries]:
        control.observe(update, names="value")
    update()
    return widgets.VBox([widgets.HBox([widgets.VBox(list(controls.values())),
                                       widgets.VBox([provider, rules, summaries])]), table, chart])
