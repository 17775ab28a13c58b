"""Chapter 03's long-context section: the sources' findings as data, and where a built context
puts each part of itself.

The findings (lost in the middle, context rot, attention dilution) are in
`data/gssc/long_context_findings.json`, one row per finding with the document it comes from.
They are reported figures: the teaching model (`course.llm`) has no position effects, so none of
them can be re-run here.

What *can* be measured is the course's own GSSC output: `context_map` finds the exact token
span of the task, the output instructions and every selected packet in a `Built` context, so the
lesson can print where Structure placed the best-scored packets and how long the whole is.
"""
from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

from course.paths import DATA_DIR
from course.tables import text_table
from solutions.gssc import SECTIONS, Built, Packet, count_tokens

FINDINGS_PATH = DATA_DIR / "gssc" / "long_context_findings.json"
# Each document's anchor in docs/sources.md.
DOCUMENTS = {"textbook": "the-textbook", "study guide": "the-study-guide",
             "section 21.6": "the-second-textbook-section"}
ZONES = ("start", "middle", "end")  # thirds of the context, by the span's centre


def load_findings(path: Union[str, Path] = FINDINGS_PATH) -> list[dict]:
    """The findings, each checked to name its document and source."""
    rows = json.loads(Path(path).read_text(encoding="utf-8"))["findings"]
    for n, row in enumerate(rows):
        missing = {"document", "source", "what", "result"} - set(row)
        if missing:
            raise ValueError(f"{path}: finding {n} has no {sorted(missing)}")
        if row["document"] not in DOCUMENTS:
            raise ValueError(f"{path}: finding {n} names an unknown document {row['document']!r}; "
                             f"use one of {sorted(DOCUMENTS)}")
    return rows


def format_findings(rows: list[dict], width: int = 30, line: int = 100) -> str:
    """Each finding's source and subject on one line, then its result (and any outside work it
    cites) indented below, wrapped at `line` characters."""
    indent = " " * (width + 2)
    lines = []
    for row in rows:
        lines.append(f"{row['source']:<{width}}{row['what']}")
        lines += textwrap.wrap(row["result"], line, initial_indent=indent, subsequent_indent=indent)
        if row.get("cites"):
            lines += textwrap.wrap(f"(cites {row['cites']})", line, initial_indent=indent,
                                   subsequent_indent=indent + " ")
    return "\n".join(lines)


@dataclass(frozen=True)
class Span:
    """One part of a built context and where it sits, in tokens from the context's start."""

    label: str
    section: str
    start: int
    end: int
    score: float | None = None  # None for the fixed parts (task, output instructions)
    rank: int | None = None  # 1 = the best-scored packet in the context
    packet: Packet | None = field(default=None, compare=False, repr=False)

    @property
    def tokens(self) -> int:
        return self.end - self.start

    def zone(self, total: int) -> str:
        """Which third of a `total`-token context the span's centre falls in."""
        centre = (self.start + self.end) / 2
        return ZONES[min(int(3 * centre / total), 2)] if total > 0 else ZONES[0]

    def from_edge(self, total: int) -> int:
        """Tokens between the span and the nearer end of the context."""
        return min(self.start, total - self.end)


def section_starts(built: Built) -> dict[str, int]:
    """Token offset of each section's header (section counts add up to the whole, in order)."""
    starts, offset = {}, 0
    for name in SECTIONS:
        starts[name] = offset
        offset += built.sections[name]
    return starts


def context_map(built: Built, label_width: int = 40) -> list[Span]:
    """The task, the output instructions and every selected packet of `built`, in text order.

    A packet's offset is the exact token count of the text before its entry (entries start on
    a new line with "-", which o200k_base never merges with what precedes it), so the spans do
    not overlap and lie within `built.tokens`.
    """
    starts = section_starts(built)
    header = {name: count_tokens(f"[{name}]\n") for name in ("Task", "Output")}
    spans = [Span("the task", "Task", starts["Task"] + header["Task"], starts["State"]),
             Span("the output instructions", "Output", starts["Output"] + header["Output"],
                  built.tokens)]
    selected = sorted((r for r in built.rows if r.status == "selected"), key=lambda r: -r.score)
    for rank, row in enumerate(selected, 1):
        at = built.text.find(row.packet.entry)
        if at < 0:
            raise ValueError(f"packet ranked {rank} is not in the context's text")
        start = count_tokens(built.text[:at])
        first = row.packet.content.strip().splitlines()[0]
        label = first if len(first) <= label_width else first[: label_width - 1] + "…"
        spans.append(Span(f"{row.packet.source}: {label}", row.packet.section, start,
                          start + row.packet.tokens, row.score, rank, row.packet))
    return sorted(spans, key=lambda s: s.start)


def span_of(spans: list[Span], packet: Packet) -> Span | None:
    """The span of `packet` in a context map, or None when it is not in the context."""
    return next((s for s in spans if s.packet == packet), None)


def placement_lines(spans: list[Span], total: int) -> list[str]:
    """A table: rank, score, span, percent of the context, zone, distance from the nearer edge."""
    rows = [["-" if s.rank is None else s.rank, "-" if s.score is None else f"{s.score:.2f}",
             f"{s.start:>5}-{s.end:<5}", f"{s.start / total:.0%}-{s.end / total:.0%}", s.zone(total),
             s.from_edge(total), s.label] for s in spans]
    return text_table(["rank", "score", "tokens", "where", "zone", "edge", "what"], rows, ">>>><><",
                      widths=[4, 5, 11, 9, 6, 5, 0], sep=[" ", "  ", "  ", "  ", " ", "  "]).split("\n")


SECTION_COLOURS = {"Role & Policies": "#6b7280", "Task": "#111827", "State": "#059669",
                   "Evidence": "#f59e0b", "Context": "#2563eb", "Output": "#111827"}


def context_map_figure(contexts: dict[str, Built], marked: dict[str, Packet] | None = None,
                       best: int = 2, title: str = ""):
    """One horizontal strip per context, in tokens: its sections in colour, and a labelled
    marker on each packet of `marked` ({label: packet}) that the context holds, or, without
    `marked`, on its `best` best-scored packets (labelled by rank)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    fig = Figure(figsize=(8, 0.9 + 0.75 * len(contexts)))
    ax = fig.subplots()
    names = list(contexts)
    for y, name in enumerate(names):
        built = contexts[name]
        for section, start in section_starts(built).items():
            ax.barh(y, built.sections[section], left=start, height=0.5,
                    color=SECTION_COLOURS[section], edgecolor="white", linewidth=0.5)
        spans = context_map(built)
        if marked is None:
            marks = [(f"#{s.rank}", s) for s in spans if s.rank is not None and s.rank <= best]
        else:
            marks = [(label, span_of(spans, p)) for label, p in marked.items()]
        for label, span in marks:
            if span is None:
                continue
            centre = (span.start + span.end) / 2
            ax.plot([centre], [y - 0.42], marker="v", color="#dc2626", markersize=7)
            ax.annotate(label, (centre, y - 0.42), xytext=(0, 5), textcoords="offset points",
                        ha="center", fontsize=7, color="#dc2626")
        ax.annotate(f"{built.tokens:,} tokens", (built.tokens, y), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=8)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.set_ylim(len(names) - 0.5, -0.9)
    ax.set_xlim(0, max(b.tokens for b in contexts.values()) * 1.15)
    ax.set_xlabel("position in the context (tokens from its start)")
    keys = {"Role & Policies": "Role & Policies", "Task": "Task, Output", "State": "State",
            "Evidence": "Evidence", "Context": "Context"}
    ax.legend(handles=[Patch(color=SECTION_COLOURS[s], label=text) for s, text in keys.items()],
              loc="upper center", bbox_to_anchor=(0.5, -0.25 - 0.1 / len(names)), ncol=5,
              fontsize=7, frameon=False)
    ax.set_title(title or "Where each part of the context sits", fontsize=10)
    fig.tight_layout()
    return fig
