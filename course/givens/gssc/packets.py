"""Packets: one candidate piece of context each, with its source, time, section and exact
token count (counted once, when the packet is made); and lab 03's sample data."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Union

from course import paths
from course.givens.gssc import matching
from course.givens.gssc.constants import PACKET_SECTIONS, PINNED, SECTION_FOR_SOURCE, SECTIONS
from course.tokenizer import count_tokens

_HEADER_LINES = frozenset(f"[{name}]" for name in SECTIONS)


def not_a_header(line: str) -> str:
    """Indent a line of text that would otherwise read exactly like a section header."""
    return "  " + line if line.strip() in _HEADER_LINES else line


def as_datetime(value: Union[datetime, str]) -> datetime:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"timestamp {value!r} is not an ISO 8601 date-time") from None
    if not isinstance(value, datetime):
        raise TypeError(f"timestamp must be a datetime or an ISO string, not {type(value).__name__}")
    # Naive times are read as UTC, so naive and aware packets can be compared.
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class Packet:
    """One candidate piece of context.

    content    the text itself
    source     where it came from ("system", "history", "notes", "docs", "tools", ...)
    timestamp  when it was written (datetime or ISO string; naive means UTC)
    section    where it is rendered; empty means SECTION_FOR_SOURCE[source] (else "Context")
    relevance  a relevance already known (e.g. from a search engine), or None to compute it
    priority   multiplies the packet's score (a blocker note is worth more than chat)
    metadata   anything else (note id, note type...); not rendered
    tokens     exact o200k_base tokens of `entry`, counted once when the packet is made
    terms      its relevance terms (see `matching.terms`), also extracted once: a read-only,
               set-like view (`&`, `in`, `len`)
    """

    content: str
    source: str
    timestamp: datetime
    section: str = ""
    relevance: float | None = None
    priority: float = 1.0
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    tokens: int = field(init=False, compare=False)
    # The terms as the keys of a dict of plain strings: unlike a frozenset, such a dict is not
    # tracked by Python's cyclic garbage collector, so a full collection (one per build at 100k
    # packets) does not walk every packet's terms (issue 35).
    _term_keys: dict = field(init=False, compare=False, repr=False)
    epoch: float = field(init=False, compare=False, repr=False)  # timestamp in seconds

    def __post_init__(self):
        if not isinstance(self.content, str) or not self.content.strip():
            raise ValueError("packet content must be a non-empty string")
        if (not isinstance(self.source, str) or not self.source.strip()
                or len(self.source) > 40 or any(c in self.source for c in "\r\n(),")):
            raise ValueError(f"packet source must be a short single-line name, got {self.source!r}")

        def set_(name, value):  # frozen: derived fields are set once, here
            object.__setattr__(self, name, value)

        set_("timestamp", as_datetime(self.timestamp))
        section = self.section or SECTION_FOR_SOURCE.get(self.source, "Context")
        if section not in PACKET_SECTIONS:
            raise ValueError(f"packet section must be one of {PACKET_SECTIONS}, got {section!r}")
        set_("section", section)
        if self.relevance is not None and not 0.0 <= self.relevance <= 1.0:
            raise ValueError(f"relevance must be between 0 and 1 (or None), got {self.relevance}")
        if not (isinstance(self.priority, (int, float)) and math.isfinite(self.priority)
                and self.priority >= 0):
            raise ValueError(f"priority must be a finite number >= 0, got {self.priority!r}")
        set_("metadata", dict(self.metadata))
        # Indexed once, when the packet is made; scoring then only compares numbers and sets.
        set_("tokens", count_tokens(self.entry))
        set_("_term_keys", dict.fromkeys(matching.terms(self.content)))
        set_("epoch", self.timestamp.timestamp())

    @property
    def terms(self):
        """The relevance terms, set-like (see `_term_keys` for why not a frozenset)."""
        return self._term_keys.keys()

    @property
    def pinned(self) -> bool:
        return self.section == PINNED

    @property
    def entry(self) -> str:
        """Exactly the text this packet adds to the context."""
        lines = [line.rstrip() for line in self.content.strip().splitlines()]
        if self.pinned:  # the system's own words, as written (but never as a section header)
            return "\n".join(not_a_header(line) for line in lines) + "\n"
        head = f"- ({self.source}, {self.timestamp:%Y-%m-%d %H:%M}) {lines[0]}"
        rest = ["  " + line if line else "" for line in lines[1:]]
        return "\n".join([head, *rest]) + "\n"


def packet_from_dict(record: Mapping[str, Any]) -> Packet:
    """A Packet from a JSON-style record (the fixtures' format)."""
    known = {"content", "source", "timestamp", "section", "relevance", "priority", "metadata"}
    unknown = set(record) - known
    if unknown:
        raise ValueError(f"unknown packet field(s): {sorted(unknown)}")
    missing = {"content", "source", "timestamp"} - set(record)
    if missing:
        raise ValueError(f"packet record is missing {sorted(missing)}")
    return Packet(**record)


def load_packets(path: Union[str, Path]) -> list[Packet]:
    """Packets from a JSON file holding a list of packet records."""
    records = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(records, list):
        raise ValueError(f"{path}: expected a JSON list of packets")
    return [packet_from_dict(r) for r in records]


def sample_candidates() -> list[Packet]:
    """The libpng cross-compiling candidates (data/gssc/libpng_candidates.json)."""
    return load_packets(paths.DATA_DIR / "gssc" / "libpng_candidates.json")


def sample_tasks() -> list[str]:
    """The sample tasks: Chinese, English and mixed (data/gssc/libpng_tasks.json)."""
    path = paths.DATA_DIR / "gssc" / "libpng_tasks.json"
    return [t["task"] for t in json.loads(path.read_text(encoding="utf-8"))]
