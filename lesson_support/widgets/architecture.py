"""Compose an agent (Chapter 15): pick an action-space design, a sub-agent mode and a cache-key
scheme, and see the tokens, cache hits, cost and tool-choice errors of the chapter's task.

The task is the lesson's: the eight asks of section 1 (each one request: the system prompt, the
design's tools and the ask) and the three searches of section 2. The figures are the lesson's
measurements, composed by `compose` (a plain function, tested in
tests/lesson_support/test_architecture_widget.py):

    asks      8 requests of 8 x (the design's prefix tokens + the ask's own tokens) prompt tokens,
              plus the log ask's data tokens (which enter the context); cached at the scheme's
              measured hit rate (section 3's session), the data never (it is new)
    searches  the mode's parent and children tokens and cached tokens as measured (section 2)
    errors    the asks' expected wrong first calls: 8 x the design's error rate over its trials
    cost      chapter 05's price_usages at the study guide's DeepSeek prices (input only)
    wall      the mode's simulated wall time (course/llm/timing.py)

It is a composition of measured parts, not a new measurement: the asks and the searches were
measured apart, and the scheme's hit rate is applied to the asks as section 3 measured it.
"""
from __future__ import annotations

import html

from course.i18n import _
from solutions.costs import SEED_PRICES, price_usages


def compose(designs: dict, modes: dict, schemes: dict, design: str, mode: str, scheme: str,
            ask_tokens: int) -> dict:
    """The composed figures (see the module docstring). `designs[name]` holds "prefix",
    "errors" (a list per ask), "trials" and "data"; `modes[name]` holds "tokens", "cached" and
    "wall_s"; `schemes[name]` is a hit rate; `ask_tokens` the asks' own prompt tokens (system
    prompt and ask, without the tools). Unknown names raise ValueError."""
    for name, known in ((design, designs), (mode, modes), (scheme, schemes)):
        if name not in known:
            raise ValueError(f"unknown choice {name!r}; choose from {sorted(known)}")
    d, m, rate = designs[design], modes[mode], schemes[scheme]
    asks = len(d["errors"])
    ask_prompt = asks * d["prefix"] + ask_tokens
    ask_cached = round(ask_prompt * rate)
    tokens = ask_prompt + d["data"] + m["tokens"]
    cached = ask_cached + m["cached"]
    cost = price_usages([{"prompt_tokens": tokens, "completion_tokens": 0, "cached_tokens": cached}],
                        SEED_PRICES)
    return {"design": design, "mode": mode, "scheme": scheme, "tokens": tokens, "cached": cached,
            "hit_rate": cached / tokens if tokens else 0.0, "cost": cost,
            "errors": round(asks * sum(d["errors"]) / d["trials"], 2), "wall_s": m["wall_s"],
            "data": d["data"]}


def summary_html(row: dict) -> str:
    headers = (_("tokens"), _("cached"), _("hit rate"), _("cost $"), _("expected wrong calls (of 8 asks)"),
               _("log data tokens"), _("searches' wall s"))
    return ("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in headers) + "</tr>"
            f"<tr><td>{row['tokens']:,}</td><td>{row['cached']:,}</td><td>{row['hit_rate']:.0%}</td>"
            f"<td>{row['cost']:.4f}</td><td>{row['errors']}</td><td>{row['data']:,}</td>"
            f"<td>{row['wall_s']:.2f}</td></tr></table>"
            f"<p>{html.escape(row['design'])} · {html.escape(row['mode'])} · {html.escape(row['scheme'])}</p>")


def agent_composer(designs: dict, modes: dict, schemes: dict, ask_tokens: int):
    import ipywidgets as w
    from IPython.display import HTML, display

    # one label width for the three (aligned), wide enough for the longest label in English and
    # Chinese; each box wide enough for its longest option
    fit = {"style": {"description_width": "8em"}, "layout": w.Layout(width="28em")}
    pick_design = w.Dropdown(options=list(designs), description=_("action space"), **fit)
    pick_mode = w.Dropdown(options=list(modes), description=_("sub-agents"), **fit)
    pick_scheme = w.Dropdown(options=list(schemes), description=_("cache keys"), **fit)
    out = w.Output()

    def show(*changes):
        with out:
            out.clear_output(wait=True)
            display(HTML(summary_html(compose(designs, modes, schemes, pick_design.value,
                                              pick_mode.value, pick_scheme.value, ask_tokens))))

    for control in (pick_design, pick_mode, pick_scheme):
        control.observe(show, "value")
    show()
    return w.VBox([pick_design, pick_mode, pick_scheme, out])
