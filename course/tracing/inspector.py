"""The context inspector: `course.inspect()` in any lesson shows the session's trace.

A stacked bar per request (its composition by part, the cached prefix hatched), the totals of
the session and of each agent run, and for a chosen request: its parts, how it differs from the
previous request with the same cache key, why its cache stopped where it did, and its messages
when contents were recorded. The HTML comes from plain functions (tested); the widget only wires
a dropdown to them. Everything a student or a model wrote is escaped.
"""
from __future__ import annotations

import hashlib
import html
import json

from course.i18n import N_, _
from course.tracing.composition import PARTS, Composition
from course.tracing.records import Request, by_run, cache_reason, longest_match, requests, totals

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")
BAR_WIDTH = 520  # pixels for the longest request
# The request dropdown's width: room for its description (80 px) and the label of request
# #1000 with 7-digit figures, in English or Chinese. ipywidgets' default (300 px) cut lesson 01's
# 7th request's Chinese label off in the browser.
CHOOSER_WIDTH = "44em"


def part_color(part: str) -> str:
    """The same colour for a part in every bar: the common parts in PARTS order, others by a
    digest of the name."""
    if part in PARTS:
        return PALETTE[PARTS.index(part) % len(PALETTE)]
    return PALETTE[hashlib.blake2b(part.encode(), digest_size=1).digest()[0] % len(PALETTE)]


def named_parts(parts: dict) -> list[tuple[str, str, int]]:
    """(part, its name in the student's language, escaped, tokens) for each part."""
    return [(part, html.escape(_(part)), count) for part, count in parts.items()]


def bar_html(record: Request, scale: float) -> str:
    """One request's stacked bar: a segment per part, the cached tokens hatched over it."""
    segments = "".join(
        f'<span title="{name}: {count}" style="display:inline-block;height:14px;'
        f'width:{max(count * scale, 1):.1f}px;background:{part_color(part)}"></span>'
        for part, name, count in named_parts(record.parts))
    cached = record.cached_tokens or 0
    label = html.escape(_("cached"))
    hatch = (f'<span title="{label}: {cached}" style="position:absolute;left:0;'
             f'top:0;height:14px;width:{cached * scale:.1f}px;background:repeating-linear-gradient('
             f'45deg,rgba(255,255,255,.65) 0 3px,transparent 3px 6px)"></span>') if cached else ""
    return f'<span style="position:relative;display:inline-block;white-space:nowrap">{segments}{hatch}</span>'


def request_label(record: Request) -> str:
    cached = (_("cached not reported") if record.cached_tokens is None else
              _("{cached} cached").format(cached=record.cached_tokens))
    return _("#{number}: {tokens} input tokens, {cached}").format(
        number=record.number, tokens=record.input_tokens if record.input_tokens is not None else "?",
        cached=cached)


def bars_html(records: list[Request]) -> str:
    """Every request's bar, one per line, with the legend of the parts that occur."""
    if not records:
        return "<p>" + html.escape(_("No request has been traced in this session yet.")) + "</p>"
    longest = max(sum(r.parts.values()) for r in records) or 1
    scale = BAR_WIDTH / longest
    rows = "".join(
        f'<div style="font-family:monospace;font-size:12px;margin:1px 0">'
        f'<span style="display:inline-block;width:300px">{html.escape(request_label(r))}</span>'
        f'{bar_html(r, scale)}</div>' for r in records)
    seen: dict[str, int] = {}
    for r in records:
        seen.update(dict.fromkeys(r.parts, 0))
    legend = " ".join(f'<span style="white-space:nowrap"><span style="display:inline-block;width:10px;'
                      f'height:10px;background:{part_color(p)}"></span> {name}</span>'
                      for p, name, _count in named_parts(seen))
    hatched = html.escape(_("hatched: cached"))
    return f"{rows}<div style='margin-top:4px'>{legend} · {hatched}</div>"


def totals_html(records: list[Request]) -> str:
    """The session's totals, then each agent run's."""
    def row(name: str, t: dict) -> str:
        cells = (name, t["requests"], t["input_tokens"], t["cached_tokens"], t["output_tokens"])
        return "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>"

    head = "".join(f"<th>{html.escape(h)}</th>" for h in (
        _("run"), _("requests"), _("input tokens"), _("cached tokens"), _("output tokens")))
    body = row(_("whole session"), totals(records))
    body += "".join(row(run if run is not None else _("outside any agent run"), t)
                    for run, t in by_run(records).items())
    return f"<table><tr>{head}</tr>{body}</table>"


def reason_text(code: str, figures: dict) -> str:
    """Why the cache stopped where it did, in a sentence (codes: records.cache_reason)."""
    texts = {
        "unreported": _("This provider does not report cached tokens."),
        "first": _("No earlier request with the same cache key in this session: the cache was "
                   "cold ({cached} tokens cached)."),
        "identical": _("The previous request is a prefix of this one: {shared} tokens shared, "
                       "{reusable} reusable in whole blocks of {block}; {cached} were cached."),
        "diverged": _("The prompt matches the previous request for {shared} tokens, then unit "
                      "{unit} ({part}) differs: the cache can reuse only the whole blocks of "
                      "{block} before it, {reusable} tokens; {cached} were cached."),
        "below_minimum": _("Only {shared} tokens match the previous request (unit {unit}, "
                           "{part}, differs first): under the {minimum}-token minimum nothing "
                           "is reused; {cached} were cached."),
        "short": _("All {shared} tokens of this request repeat the start of the previous "
                   "request, but under the {minimum}-token minimum nothing is reused; {cached} "
                   "were cached."),
        "fewer": _("{reusable} tokens could have been reused, but only {cached} were cached: "
                   "the blocks were evicted, another server answered, or the provider caches by "
                   "other rules."),
        "older": _("Only {shared} tokens match the previous request (unit {unit}, {part}, differs "
                   "first), but request #{older} shares {older_shared} with this one and the "
                   "cache still held them: {cached} were cached."),
        "inside": _("{cached} tokens were cached, more than the {older_shared} that any earlier "
                    "request shares with this one in whole units: unit {older_unit} "
                    "({older_part}) changed, but its start matches an earlier prompt token for "
                    "token. The trace compares whole units; the cached tokens show how far the "
                    "match reaches."),
        "earlier": _("Only {shared} tokens match the previous request (unit {unit}, {part}, "
                     "differs first), but {cached} were cached: the cache matched a longer "
                     "prefix of an earlier prompt, an older request's or the start of the unit "
                     "that changed."),
    }
    shown = {**figures}
    for part, unit in (("part", "unit"), ("older_part", "older_unit")):
        if shown.get(part) is not None:
            shown[part] = _(shown[part])
        if shown.get(unit) is None:
            shown[unit] = "-"
    return texts[code].format(**shown)


def unit_diff(before: Composition | None, now: Composition) -> list[tuple[int, str, int, str]]:
    """Per unit (0 is the tools block when there is one): (index, part, tokens, status), status
    "same", "changed" or "new"; units the previous request had beyond this one's end: "removed"."""
    rows = []
    for i, (digest, part, count) in enumerate(zip(now.hashes, now.parts, now.tokens)):
        if before is None or i >= len(before.hashes):
            status = "new"
        else:
            status = "same" if before.hashes[i] == digest else "changed"
        rows.append((i, part, count, status))
    if before is not None:
        rows += [(i, before.parts[i], before.tokens[i], "removed")
                 for i in range(len(now.hashes), len(before.hashes))]
    return rows


STATUS_LABELS = {"same": N_("same as before"), "changed": N_("changed"), "new": N_("added"),
                 "removed": N_("no longer sent")}


def detail_html(record: Request, previous: Request | None, before: Composition | None,
                now: Composition | None, longest=None) -> str:
    """One request in full: its parts, its diff to the previous request with its cache key, why
    the cache stopped there (`longest`: records.longest_match), and its messages if they were
    recorded."""
    e = html.escape
    code, figures = cache_reason(record, longest)
    part_label, tokens_label = e(_("part")), e(_("tokens"))
    parts = "".join(f"<tr><td>{name}</td><td>{n}</td></tr>" for _p, name, n in named_parts(record.parts))
    facts = [_("model: {model}").format(model=record.model),
             _("cache key: {key}").format(key=record.cache_key)]
    if record.compaction:
        facts.append(_("compaction: {policy}").format(policy=record.compaction))
    out = [f"<h4>{e(request_label(record))}</h4>",
           "<p>" + " · ".join(e(f) for f in facts) + "</p>",
           f"<table><tr><th>{part_label}</th><th>{tokens_label}</th></tr>{parts}</table>",
           "<p>" + e(_("Cache: {reason}").format(reason=reason_text(code, figures))) + "</p>"]
    if previous is not None:
        out.append("<p>" + e(_("Compared with request #{number}:").format(number=previous.number)) + "</p>")
    if now is not None and (previous is not None or before is None):
        unit_label, versus = e(_("unit")), e(_("vs the previous request"))
        status = {key: e(_(label)) for key, label in STATUS_LABELS.items()}
        names = {p: name for p, name, _count in named_parts(dict.fromkeys(now.parts, 0))}
        if before is not None:
            names.update((p, name) for p, name, _count in named_parts(dict.fromkeys(before.parts, 0)))
        rows = "".join(
            f"<tr><td>{i}</td><td>{names[p]}</td><td>{n}</td><td>{status[s]}</td></tr>"
            for i, p, n, s in unit_diff(before, now))
        out.append(f"<table><tr><th>{unit_label}</th><th>{part_label}</th><th>{tokens_label}</th>"
                   f"<th>{versus}</th></tr>{rows}</table>")
    if record.messages is None:
        out.append("<p><i>" + e(_(
            "Message contents were not recorded: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
            "=span_only before the first request to record them.")) + "</i></p>")
    else:
        text = json.dumps(record.messages, ensure_ascii=False, indent=1)
        out.append(f"<pre style='max-height:300px;overflow:auto'>{e(text)}</pre>")
    return "".join(out)


def inspector(records: list[Request] | None = None):
    """The widget: totals, the bars, a dropdown of requests and the chosen request in full."""
    import ipywidgets

    from course.tracing.setup import current

    records = requests() if records is None else records
    state = current()
    details = state.details if state is not None else {}
    by_span = {r.span_id: r for r in records}
    detail = ipywidgets.HTML()
    options = [(request_label(r), r.number) for r in records]
    choose = ipywidgets.Dropdown(options=options, description=_("request"),
                                 value=options[-1][1] if options else None,
                                 layout=ipywidgets.Layout(width=CHOOSER_WIDTH))

    def show(change=None):
        if choose.value is None:
            detail.value = ""
            return
        record = records[choose.value - 1]
        previous = by_span.get(record.previous_span_id)
        detail.value = detail_html(record, previous, details.get(record.previous_span_id),
                                   details.get(record.span_id),
                                   longest_match(record, records, details))

    choose.observe(show, names="value")
    show()
    return ipywidgets.VBox([ipywidgets.HTML(totals_html(records)), ipywidgets.HTML(bars_html(records)),
                            choose, detail])
