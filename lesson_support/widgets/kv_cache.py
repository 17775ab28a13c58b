"""KV-cache explorer (Chapter 05): edit tokens of a short prompt and see what the cache keeps.

One text box per position holds a token. The cached prompt is the one shown at the start (or
the one you last cached with the button). For the edited prompt the explorer shows, per layer
of `lesson_support.kv_cache.TinyModel`, which cached K/V rows survive (the longest common
prefix), which must be computed again, and which of those really came out different; then
the attention weights of the last token in each layer.

The logic is plain functions (`explorer_view`, `row_map_html`, `weights_html`,
`summary_line`), tested in tests/lesson_support/test_kv_cache_widget.py; `kv_cache_explorer()`
only wires controls to them.
"""
from __future__ import annotations

import html

from course.i18n import _
from lesson_support.kv_cache import TinyModel, changed_rows, prefill, resume, reuse_plan

# A system prompt with the current time in it: the textbook's production incident in miniature.
DEFAULT_TOKENS = ("<|im_start|>", "system", "Time:", "10:30", "You", "build", "code",
                  "<|im_end|>", "<|im_start|>", "user", "Is", "it", "green", "?")
KEPT, CHANGED, SAME = "#c8e6c9", "#ffcdd2", "#ffe0b2"


def explorer_view(cached_tokens, new_tokens, model: TinyModel | None = None) -> dict:
    """Everything the widget shows for a cached prompt and an edited one.

    Keys: error (a message, or None), plan (`Reuse`), layers, changed (per layer, the rows whose
    K or V differ; None when the lengths differ), recompute_rows (K/V rows over all layers),
    weights (the last token's attention weights per layer), tokens.
    """
    model = model or TinyModel()
    cached_tokens, new_tokens = tuple(cached_tokens), tuple(new_tokens)
    empty = [i for i, t in enumerate(new_tokens) if not t.strip()]
    if not new_tokens or empty:
        where = ", ".join(str(i) for i in empty) or _("any")
        return {"error": _("position {where} has no token: type one in every box").format(where=where),
                "tokens": new_tokens}
    plan = reuse_plan(cached_tokens, new_tokens)
    cache = prefill(model, cached_tokens).cache
    step = resume(model, cache, new_tokens)
    changed = (changed_rows(model, cached_tokens, new_tokens)
               if len(cached_tokens) == len(new_tokens) else None)
    return {"error": None, "plan": plan, "layers": model.n_layers, "changed": changed,
            "recompute_rows": plan.recompute * model.n_layers,
            "weights": [w.tolist() for w in step.last_weights], "tokens": new_tokens}


def summary_line(view: dict) -> str:
    if view["error"]:
        return _("Cannot read this prompt: {error}.").format(error=view["error"])
    plan, total = view["plan"], len(view["tokens"])
    if plan.recompute == 0:
        return _("Nothing changed: all {total} cached rows are reused in each of the {layers} "
                 "layers; no K/V row is computed again.").format(total=total, layers=view["layers"])
    edit = (_("The first difference is at position {position}").format(position=plan.kept)
            if plan.kept < total else _("The prompt only grew"))
    return _("{edit}: {kept} of {total} rows survive in each layer, {recompute} must be computed "
             "again, {rows} K/V rows over {layers} layers ({share} of the prompt reused).").format(
        edit=edit, kept=plan.kept, total=total, recompute=plan.recompute,
        rows=view["recompute_rows"], layers=view["layers"], share=f"{plan.kept / total:.0%}")


def _cell(text: str, colour: str, title: str) -> str:
    return (f"<td title='{html.escape(title)}' style='background:{colour};padding:2px 6px;"
            f"border:1px solid #fff;font-family:monospace;font-size:12px'>{html.escape(text)}</td>")


def row_map_html(view: dict) -> str:
    """A grid: one row per layer, one cell per position, coloured by what happens to it."""
    if view["error"]:
        return ""
    plan, tokens = view["plan"], view["tokens"]
    head = "".join(f"<th style='font-size:11px;font-weight:normal'>{i}<br>{html.escape(t)}</th>"
                   for i, t in enumerate(tokens))
    rows = []
    for layer in range(view["layers"]):
        changed = set(view["changed"][layer]) if view["changed"] is not None else None
        cells = []
        for i in range(len(tokens)):
            if i < plan.kept:
                cells.append(_cell(_("kept"), KEPT, _("reused from the cache")))
            elif changed is None or i in changed:
                cells.append(_cell(_("new"), CHANGED, _("recomputed: its key/value differ")))
            else:
                cells.append(_cell(_("same"), SAME, _("recomputed, and came out identical: the "
                                                      "cache cannot know that without computing it")))
        name = _("layer {number}").format(number=layer + 1)
        rows.append(f"<tr><th style='text-align:left;font-size:12px'>{name}</th>"
                    f"{''.join(cells)}</tr>")
    legend = ("<div style='font-size:12px'>" + _(
        "{kept} kept from the cache {new} recomputed, different {same} recomputed, came out the "
        "same").format(kept=_swatch(KEPT), new=_swatch(CHANGED), same=_swatch(SAME)) + "</div>")
    return f"<table style='border-collapse:collapse'><tr><th></th>{head}</tr>{''.join(rows)}</table>{legend}"


def _swatch(colour: str) -> str:
    return f"<span style='background:{colour};padding:0 8px;margin-left:8px'></span>"


def weights_html(view: dict) -> str:
    """The last token's attention weights in each layer, one bar per position."""
    if view["error"]:
        return ""
    tokens = view["tokens"]
    title = _("Attention of the last token ({token}) over every position").format(
        token=html.escape(tokens[-1]))
    parts = [f"<div style='font-size:12px'><b>{title}</b></div>"]
    for layer, weights in enumerate(view["weights"]):
        bars = "".join(
            f"<div style='display:flex;align-items:center;font-size:11px;font-family:monospace'>"
            f"<span style='width:9em;overflow:hidden'>{i} {html.escape(t)}</span>"
            f"<span style='background:#90caf9;height:10px;width:{w * 300:.0f}px'></span>"
            f"<span style='margin-left:4px'>{w:.3f}</span></div>"
            for i, (t, w) in enumerate(zip(tokens, weights)))
        name = _("layer {number}").format(number=layer + 1)
        parts.append(f"<div style='display:inline-block;vertical-align:top;margin-right:24px'>"
                     f"<div style='font-size:12px'>{name}</div>{bars}</div>")
    return "".join(parts)


def kv_cache_explorer(tokens=DEFAULT_TOKENS, model: TinyModel | None = None):
    """The widget: a text box per token, a button to cache the current prompt, and the views."""
    import ipywidgets as w

    model = model or TinyModel()
    state = {"cached": tuple(tokens)}
    boxes = [w.Text(value=t, layout=w.Layout(width="7.5em"), continuous_update=False)
             for t in tokens]
    # a button as wide as its label in any language, never squeezed by the long label beside it
    fit = {"layout": w.Layout(width="auto", flex="0 0 auto")}
    cache_button = w.Button(description=_("Cache this prompt"), **fit)
    reset_button = w.Button(description=_("Reset"), **fit)
    cached_label, summary, grid, bars = w.HTML(), w.HTML(), w.HTML(), w.HTML()

    def render(*changes):
        view = explorer_view(state["cached"], [b.value for b in boxes], model)
        cached_label.value = ("<span style='font-size:12px'>" + _("cached prompt:") + " <code>"
                              + html.escape(" ".join(state["cached"])) + "</code></span>")
        summary.value = f"<b>{html.escape(summary_line(view))}</b>"
        grid.value = row_map_html(view)
        bars.value = weights_html(view)

    def cache_current(button):
        current = tuple(b.value for b in boxes)
        if explorer_view(current, current, model)["error"] is None:  # never cache an empty box
            state["cached"] = current
        render()

    def reset(button):
        state["cached"] = tuple(tokens)
        for box, token in zip(boxes, tokens):
            box.value = token
        render()

    for box in boxes:
        box.observe(render, names="value")
    cache_button.on_click(cache_current)
    reset_button.on_click(reset)
    render()
    return w.VBox([w.HBox(boxes, layout=w.Layout(flex_flow="row wrap")),
                   w.HBox([cache_button, reset_button, cached_label]), summary, grid, bars])
