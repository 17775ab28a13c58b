"""Compaction explorer: replay a long agent run with a trigger threshold and a keep-recent
setting, and compare the full transcript with the context the agent ends up holding.

Each tool call gets a colour; its result wears the same colour, so a result whose call was cut
away stands out. The checker's verdict is shown for both lists. The logic is in plain functions
(tested in tests/lesson_support/test_compaction_widget.py); `compaction_explorer()` only
wires controls to them.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass
from functools import partial

from solutions.compaction import (Pairing, check_pairing, compact, drop_oldest_messages,
                                  is_summary, load_transcript, replay, sawtooth_points)
from solutions.tokens import count_request_tokens
from course import paths
from course.i18n import N_, _

DATA_DIR = paths.DATA_DIR / "compaction"
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f",
           "#ff9da7", "#86bcb6", "#d4a6c8")
PROBLEM_COLOUR = "#d62728"
METHODS = {"turns": N_("turn-aware compaction"), "naive": N_("naive window (last N messages)")}


def sample_run() -> tuple[list[dict], list[dict]]:
    """The Chapter 04 sample run and the tools it was recorded with."""
    run = load_transcript(DATA_DIR / "long_run.jsonl")
    tools = json.loads((DATA_DIR / "tools.json").read_text(encoding="utf-8"))
    return run, tools


def pair_colours(messages: list[dict]) -> dict[str, str]:
    """call id -> colour, in order of first appearance (calls and stray results alike)."""
    colours: dict[str, str] = {}
    for message in messages:
        ids = [c.get("id") for c in message.get("tool_calls") or ()]
        if message.get("role") == "tool":
            ids = [message.get("tool_call_id")]
        for call_id in ids:
            if call_id not in colours:
                colours[call_id] = PALETTE[len(colours) % len(PALETTE)]
    return colours


@dataclass
class Row:
    index: int
    role: str
    preview: str            # one line of the content
    call_ids: list[str]     # calls made (assistant) or answered (tool)
    summary: bool           # the compaction summary
    problem: str | None     # the checker's reason, on the message it points at


def preview(message: dict, width: int = 90) -> str:
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    if not text and message.get("tool_calls"):
        text = "; ".join(f"{c['function']['name']} {c['function']['arguments']}"
                         for c in message["tool_calls"])
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def message_rows(messages: list[dict], verdict: Pairing | None = None) -> list[Row]:
    verdict = verdict if verdict is not None else check_pairing(messages)
    rows = []
    for i, message in enumerate(messages):
        if message.get("role") == "tool":
            ids = [message.get("tool_call_id")]
        else:
            ids = [c.get("id") for c in message.get("tool_calls") or ()]
        problem = verdict.reason if not verdict.ok and verdict.index == i else None
        rows.append(Row(i, message.get("role", "?"), preview(message), ids, is_summary(message),
                        problem))
    return rows


@dataclass
class Exploration:
    before: list[dict]
    after: list[dict]
    verdict_before: Pairing
    verdict_after: Pairing
    tokens_before: int
    tokens_after: int
    sizes: list[int]            # context tokens at each step of the replay
    compacted_at: list[int]     # steps at which the context was shrunk
    peaks: list[int]            # context tokens just before each shrink


def explore(run: list[dict], tools: list[dict] | None, keep: int, threshold_tokens: int,
            method: str = "turns") -> Exploration:
    """Replay `run`, shrinking whenever the context passes `threshold_tokens`.

    method "turns": compact() keeping `keep` recent turns; "naive": keep the last `keep`
    messages wherever that cut falls.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}: use one of {', '.join(METHODS)}")
    shrink = (partial(compact, keep_turns=keep) if method == "turns"
              else partial(drop_oldest_messages, keep_messages=keep))
    result = replay(run, threshold_tokens, shrink, tools)
    return Exploration(run, result.messages, check_pairing(run), check_pairing(result.messages),
                       count_request_tokens(run, tools),
                       count_request_tokens(result.messages, tools),
                       result.sizes, result.compacted_at, result.peaks)


def messages_html(messages: list[dict], verdict: Pairing | None = None) -> str:
    """The message list as HTML: role, coloured call-id chips, a one-line preview."""
    colours = pair_colours(messages)
    out = ['<div style="font-family:monospace;font-size:12px;max-height:420px;overflow-y:auto">']
    for row in message_rows(messages, verdict):
        chips = "".join(
            f'<span style="background:{colours[c]};color:white;border-radius:3px;'
            f'padding:0 4px;margin-right:3px">{html.escape(str(c))}</span>' for c in row.call_ids)
        border = PROBLEM_COLOUR if row.problem else ("#999" if row.summary else "#ddd")
        style = f"border-left:4px solid {border};padding:2px 6px;margin:1px 0"
        if row.summary:
            style += ";background:#f4f4f4"
        line = (f'<div style="{style}"><b>{row.index:3d} {html.escape(row.role)}</b> {chips}'
                f'{html.escape(row.preview)}')
        if row.problem:
            line += (f'<div style="color:{PROBLEM_COLOUR}">&#9888; {html.escape(row.problem)}'
                     f'</div>')
        out.append(line + "</div>")
    out.append("</div>")
    return "".join(out)


def verdict_html(verdict: Pairing) -> str:
    colour = "#2ca02c" if verdict.ok else PROBLEM_COLOUR
    word = _("pairing intact") if verdict.ok else _("a provider would reject this (HTTP 400)")
    return (f'<span style="color:{colour};font-weight:bold">{html.escape(word)}</span>'
            + ("" if verdict.ok else f": {html.escape(str(verdict))}"))


def sawtooth_svg(sizes: list[int], threshold_tokens: int, compacted_at: list[int],
                 peaks: list[int] = (), width: int = 560, height: int = 140) -> str:
    """Context tokens per step as a small SVG line, with the threshold and compactions marked.
    With `peaks`, the line climbs to the size that triggered each compaction before it drops."""
    if not sizes:
        return "<svg/>"
    top = max(max(sizes), *peaks, threshold_tokens) * 1.05
    step = width / max(len(sizes) - 1, 1)

    def y(v: float) -> float:
        return height - v / top * height

    xs, ys = (sawtooth_points(sizes, compacted_at, peaks) if peaks
              else (range(len(sizes)), sizes))
    points = " ".join(f"{i * step:.1f},{y(v):.1f}" for i, v in zip(xs, ys))
    marks = "".join(f'<circle cx="{i * step:.1f}" cy="{y(sizes[i]):.1f}" r="3" fill="{PROBLEM_COLOUR}"/>'
                    for i in compacted_at)
    return (f'<svg width="{width}" height="{height}" style="border:1px solid #ddd">'
            f'<line x1="0" x2="{width}" y1="{y(threshold_tokens):.1f}" y2="{y(threshold_tokens):.1f}" '
            f'stroke="#999" stroke-dasharray="4 3"/>'
            f'<polyline points="{points}" fill="none" stroke="{PALETTE[0]}" stroke-width="2"/>'
            f'{marks}</svg>')


def exploration_html(result: Exploration, threshold_tokens: int) -> tuple[str, str, str]:
    """(summary line + chart, before list, after list) for the three panes of the widget."""
    before = _("before: {messages} messages, {tokens} tokens, {verdict}").format(
        messages=len(result.before), tokens=f"{result.tokens_before:,}",
        verdict=verdict_html(result.verdict_before))
    after = _("after: {messages} messages, {tokens} tokens, {compactions} compaction(s), "
              "{verdict}").format(messages=len(result.after), tokens=f"{result.tokens_after:,}",
                                  compactions=len(result.compacted_at),
                                  verdict=verdict_html(result.verdict_after))
    head = (f"<div>{before}<br>{after}</div>"
            + sawtooth_svg(result.sizes, threshold_tokens, result.compacted_at, result.peaks))
    return (head, messages_html(result.before, result.verdict_before),
            messages_html(result.after, result.verdict_after))


def compaction_explorer(run: list[dict] | None = None, tools: list[dict] | None = None):
    """The ipywidgets explorer: sliders for keep-recent and the threshold, method toggle."""
    import ipywidgets as w

    if run is None:
        run, tools = sample_run()
    total = count_request_tokens(run, tools)
    keep = w.IntSlider(value=4, min=0, max=20, description=_("keep recent"))
    threshold = w.IntSlider(value=min(5000, total), min=500, max=max(total, 1000), step=250,
                            description=_("threshold"))
    method = w.ToggleButtons(options=[(_(label), key) for key, label in METHODS.items()],
                             value="turns", style={"button_width": "auto"})  # never "turn-aware comp…"
    header, before, after = w.HTML(), w.HTML(), w.HTML()

    def update(change=None):
        result = explore(run, tools, keep.value, threshold.value, method.value)
        header.value, before.value, after.value = exploration_html(result, threshold.value)

    for control in (keep, threshold, method):
        control.observe(update, names="value")
    update()
    panes = w.HBox([w.VBox([w.HTML("<b>" + _("full transcript") + "</b>"), before]),
                    w.VBox([w.HTML("<b>" + _("context after the run") + "</b>"), after])])
    return w.VBox([w.HBox([keep, threshold]), method, header, panes])
