"""What connected MCP servers add to every request, and what a session of requests costs (Chapter 18).

Pick the servers an agent connects, how their tools reach the model (every schema in every
request, or a one-line catalogue with schemas loaded when chosen), the number of requests and a
provider's prices: the read-out draws the request's prefix in the order it is sent and prices the
session twice with chapter 05's calculator, every prompt token a miss and with the history only
appended (each request reads the previous one from the cache).

The figures per server (tools, schema tokens, catalogue tokens) are the lesson's, counted from
the servers' own `tools/list`; the logic is plain functions (`prefix_segments`, `session_bill`,
`bill_line`, `prefix_html`), tested in tests/lesson_support/test_mcp_widget.py; `bill_explorer()`
only wires controls to them.
"""
from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from course.i18n import N_, _
from solutions.costs import Prices, append_only_shared, price_run

MODES = ("every_schema", "on_demand")
MODE_LABELS = {"every_schema": N_("every schema, every request"),
               "on_demand": N_("catalogue, schemas on demand")}
SYSTEM, CONVERSATION = "#9e9e9e", "#1976d2"
SERVER_COLOURS = ("#ffa000", "#43a047", "#8e24aa", "#e53935", "#00897b", "#6d4c41")
SERVER_FIELDS = ("tools", "schema_tokens", "catalogue_tokens")


def check_servers(servers: Mapping[str, Mapping]) -> None:
    """ValueError naming the server and the field when a figure is missing or not a whole count."""
    if not servers:
        raise ValueError("no servers: give at least one {name: {tools, schema_tokens, catalogue_tokens}}")
    for name, figures in servers.items():
        for field in SERVER_FIELDS:
            value = figures.get(field)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"server {name!r}: {field} must be a whole number of at least 0, "
                                 f"not {value!r}")


def prefix_segments(servers: Mapping[str, Mapping], connected: Sequence[str], mode: str,
                    system_tokens: int, loaded_tokens: int = 0) -> list[dict]:
    """The tool part of a request's prefix, in the order it is sent: the system prompt, then for
    each connected server (in the order given) its schemas (`every_schema`) or its catalogue lines
    (`on_demand`); on demand, the schemas loaded so far come after the catalogues."""
    check_servers(servers)
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: choose one of {', '.join(MODES)}")
    unknown = [name for name in connected if name not in servers]
    if unknown:
        raise ValueError(f"unknown server {unknown[0]!r}: the servers are {', '.join(servers)}")
    field = "schema_tokens" if mode == "every_schema" else "catalogue_tokens"
    segments = [{"part": "system", "server": None, "tokens": system_tokens}]
    segments += [{"part": field, "server": name, "tokens": servers[name][field]} for name in connected]
    if mode == "on_demand" and loaded_tokens:
        segments.append({"part": "loaded", "server": None, "tokens": loaded_tokens})
    return segments


def session_bill(prefix_tokens: int, requests: int, turn_tokens: int, prices: Prices,
                 reply_tokens: int = 0) -> dict:
    """A session of `requests` requests that all start with the same prefix, each adding
    `turn_tokens` to the conversation: its prompt tokens and its price with no cache and with an
    append-only history (chapter 05's `append_only_shared`, every shared token a hit)."""
    if requests < 1:
        raise ValueError(f"a session has at least one request, not {requests}")
    prompts = [prefix_tokens + turn_tokens * (n + 1) for n in range(requests)]
    replies = [reply_tokens] * requests
    cached = append_only_shared(prompts)
    return {"requests": requests, "prompt_tokens": sum(prompts), "prefix_tokens": prefix_tokens,
            "prefix_share": prefix_tokens * requests / sum(prompts),
            "cached_tokens": sum(cached),
            "uncached_usd": price_run(prompts, [0] * requests, prices, replies),
            "cached_usd": price_run(prompts, cached, prices, replies)}


def bill_line(segments: Sequence[dict], bill: dict, prices: Prices) -> str:
    """One paragraph: what the tools add to each request, and the session's two prices."""
    tools = sum(s["tokens"] for s in segments if s["part"] != "system")
    return _("The tools add {tools} tokens to every request, {share} of all {prompt} prompt tokens "
             "of {requests} requests. At the prices of {provider}, the session costs ${uncached} with no "
             "cache and ${cached} when each request reads the one before from the cache "
             "({times}x less).").format(
        tools=f"{tools:,}", share=f"{tools * bill['requests'] / bill['prompt_tokens']:.0%}",
        prompt=f"{bill['prompt_tokens']:,}", requests=bill["requests"], provider=prices.name,
        uncached=f"{bill['uncached_usd']:.4f}", cached=f"{bill['cached_usd']:.4f}",
        times=f"{bill['uncached_usd'] / bill['cached_usd']:.1f}" if bill["cached_usd"] else "—")


def _segment_label(segment: dict) -> str:
    if segment["part"] == "system":
        return _("system prompt")
    if segment["part"] == "loaded":
        return _("schemas loaded")
    if segment["part"] == "schema_tokens":
        return _("{server}: schemas").format(server=segment["server"])
    return _("{server}: catalogue").format(server=segment["server"])


def prefix_html(segments: Sequence[dict], turn_tokens: int, width: int = 640) -> str:
    """The first request drawn to scale, left to right as it is sent: each part of the prefix,
    then the conversation; a part too small to see still gets a sliver, and every part is named
    with its tokens below the bar."""
    parts = [(_segment_label(s), s["tokens"], _colour(s, i)) for i, s in enumerate(segments)]
    parts.append((_("conversation"), turn_tokens, CONVERSATION))
    total = sum(tokens for _label, tokens, _c in parts) or 1
    bar = "".join(f"<span title='{html.escape(label)}' style='display:inline-block;height:16px;"
                  f"background:{colour};width:{max(tokens / total * width, 2 if tokens else 0):.0f}px'></span>"
                  for label, tokens, colour in parts)
    legend = "".join(f"<span style='margin-right:1em;font-size:12px'><span style='display:inline-block;"
                     f"width:10px;height:10px;background:{colour}'></span> {html.escape(label)} "
                     f"{tokens:,}</span>" for label, tokens, colour in parts)
    title = _("the first request, in the order it is sent (tokens)")
    return (f"<div><b style='font-size:12px'>{html.escape(title)}</b>"
            f"<div style='white-space:nowrap;width:{width + 20}px'>{bar}</div><div>{legend}</div></div>")


def _colour(segment: dict, index: int) -> str:
    if segment["part"] == "system":
        return SYSTEM
    if segment["part"] == "loaded":
        return "#5e35b1"
    return SERVER_COLOURS[(index - 1) % len(SERVER_COLOURS)]


def bill_explorer(servers: Mapping[str, Mapping], presets: Mapping[str, Prices], system_tokens: int,
                  turn_tokens: int, loaded_tokens: int = 0):
    """A toggle per server, the two ways of offering tools, a requests slider and a price preset."""
    import ipywidgets as w

    check_servers(servers)
    toggles = [w.ToggleButton(value=i == 0, description=name, layout=w.Layout(width="auto"))
               for i, name in enumerate(servers)]
    mode = w.ToggleButtons(options=[(_(MODE_LABELS[m]), m) for m in MODES], value="every_schema",
                           style={"button_width": "18em"})
    requests = w.IntSlider(value=20, min=1, max=200, description=_("requests"),
                           style={"description_width": "6em"}, layout=w.Layout(width="32em"))
    preset = w.Dropdown(options=list(presets), value=next(iter(presets)), description=_("prices"),
                        style={"description_width": "6em"}, layout=w.Layout(width="40em"))
    out = w.HTML()

    def show(*changes):
        chosen = [t.description for t in toggles if t.value]
        segments = prefix_segments(servers, chosen, mode.value, system_tokens, loaded_tokens)
        prices = presets[preset.value]
        bill = session_bill(sum(s["tokens"] for s in segments), requests.value, turn_tokens, prices)
        out.value = (f"{prefix_html(segments, turn_tokens)}"
                     f"<p style='max-width:60em'>{html.escape(bill_line(segments, bill, prices))}</p>")

    for control in (*toggles, mode, requests, preset):
        control.observe(show, "value")
    show()
    return w.VBox([w.HBox(toggles), mode, requests, preset, out])
