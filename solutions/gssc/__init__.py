"""Chapter 03: build a context with Gather -> Select -> Structure -> Compress.

The four stages are plain functions so each can be read, tested and replaced on its own:

    packets, failures = gather(sources, task)            # collect candidates; a broken source is reported, not fatal
    chosen = select(candidates, task, room, config)      # score, then fill the budget greedily
    text = structure(task, pinned + chosen, output)      # fixed sections, fixed order, same bytes every time
    result = compress(task, pinned + chosen, output, limit)   # guarantee the limit; mark any cut

`build_context` runs select, structure and compress on packets you already have;
`ContextBuilder` adds gather in front. Token counts are exact (tiktoken o200k_base) and are
computed once per packet, when the packet is made.

The layout of the rendered context, and why:

    [Role & Policies]      the system's own instructions: pinned, never scored, never cut
    [Task]                 the user's task: never cut
    [State]                task state, blockers, next actions (notes)
    [Evidence]             documents and tool results
    [Context]              conversation history, general notes
    [Output]               how to answer: never cut

Every optional entry is one line `- (source, YYYY-MM-DD HH:MM) text`, its further lines
indented by two spaces, so retrieved text can never pose as a section header. Token counts add
up exactly: every section starts with "[", every entry with "-", each ends with a newline, and
o200k_base never merges a newline with a following "[" or "-" into one token. So the context's
count is the count of its fixed parts plus the `tokens` of each entry, which is what lets
select fill the budget exactly.
"""
from __future__ import annotations

import heapq
import json
import math
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, Union

from solutions.tokens import count_tokens  # exact o200k_base counts (Chapter 02); re-exported

SECTIONS = ("Role & Policies", "Task", "State", "Evidence", "Context", "Output")
PINNED = "Role & Policies"  # packets in this section are always kept, never scored or cut
PACKET_SECTIONS = ("Role & Policies", "State", "Evidence", "Context")  # Task/Output are not packets

# Where a packet goes when its maker does not say.
SECTION_FOR_SOURCE = {
    "system": "Role & Policies",
    "notes": "State",
    "docs": "Evidence",
    "tools": "Evidence",
    "history": "Context",
}

DEFAULT_OUTPUT = (
    "Answer the task using the sections above. Name the entries you rely on by their source "
    "and time. If something you need is missing or looks out of date, say so."
)


_HEADER_LINES = frozenset(f"[{name}]" for name in SECTIONS)


def _not_a_header(line: str) -> str:
    """Indent a line of text that would otherwise read exactly like a section header."""
    return "  " + line if line.strip() in _HEADER_LINES else line


class BudgetError(ValueError):
    """The token budget cannot hold what must always be sent."""


# --------------------------------------------------------------------------- packets


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
    terms      its relevance terms (see `terms`), also extracted once
    """

    content: str
    source: str
    timestamp: datetime
    section: str = ""
    relevance: float | None = None
    priority: float = 1.0
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    tokens: int = field(init=False, compare=False)
    terms: frozenset = field(init=False, compare=False, repr=False)  # for relevance
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
        set_("terms", frozenset(terms(self.content)))
        set_("epoch", self.timestamp.timestamp())

    @property
    def pinned(self) -> bool:
        return self.section == PINNED

    @property
    def entry(self) -> str:
        """Exactly the text this packet adds to the context."""
        lines = [line.rstrip() for line in self.content.strip().splitlines()]
        if self.pinned:  # the system's own words, as written (but never as a section header)
            return "\n".join(_not_a_header(line) for line in lines) + "\n"
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


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class ContextConfig:
    """How a context is built.

    budget            tokens for the whole request: the context plus the answer
    reserve           tokens kept free for the answer (the context may use budget - reserve)
    relevance_weight  score = priority * (relevance_weight * relevance + recency_weight * recency)
    recency_weight
    min_relevance     candidates less relevant than this are dropped before the fill
    half_life_hours   recency halves every this many hours
    diversity         0 = off; above 0, a candidate's score is lowered by diversity times its
                      largest word overlap with what is already chosen (near-duplicates lose)
    """

    budget: int = 8000
    reserve: int = 1000
    relevance_weight: float = 0.7
    recency_weight: float = 0.3
    min_relevance: float = 0.1
    half_life_hours: float = 24.0
    diversity: float = 0.0

    def __post_init__(self):
        for name in ("budget", "reserve"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a whole number of tokens >= 0, got {value!r}")
        if self.reserve >= self.budget:
            raise ValueError(f"reserve ({self.reserve}) must be smaller than budget ({self.budget})")
        for name in ("relevance_weight", "recency_weight"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        for name in ("min_relevance", "diversity"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
                raise ValueError(f"{name} must be between 0 and 1, got {value!r}")
        if not (isinstance(self.half_life_hours, (int, float)) and self.half_life_hours > 0):
            raise ValueError(f"half_life_hours must be > 0, got {self.half_life_hours!r}")

    @property
    def limit(self) -> int:
        """Tokens the context itself may use."""
        return self.budget - self.reserve


# --------------------------------------------------------------------------- select: scoring

# Hiragana, Katakana, CJK ideographs (with extension A and compatibility), Hangul.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_WORDS = re.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+)")
_CHUNKS = re.compile(r"\w+")  # letters, digits, "_" and CJK: split further by _WORDS
# Function words that match almost anything; "not" stays (as in "Could NOT find ZLIB").
_STOPWORDS = frozenset(
    "a an and are as at be by can do does did for from had has have how i in is it its me my "
    "of on or our so that the their them then there these this to was we were what when where "
    "which who why will with you your".split()
)
# Chinese question and filler words: a query's CJK run is split at them.
_CJK_STOPWORDS = re.compile("为什么|怎么办|怎么|什么|如何|我们|你们|这个|那个|一个")


def _bigrams(run: str) -> list[str]:
    return [run[i:i + 2] for i in range(len(run) - 1)]


def terms(text: str) -> set[str]:
    """The terms relevance is computed on.

    Latin-script text: lower-cased words and numbers (split at anything else, so
    `ZLIB_LIBRARY` gives `zlib` and `library`), minus a few function words.
    CJK text has no spaces between words, so every pair of neighbouring characters (a
    bigram) is a term, and every single character too (so a one-character query can match).
    """
    found: set[str] = set()
    for chunk in set(_CHUNKS.findall(text.casefold())):
        if chunk.isascii():  # the common case, kept fast: only "_" can still split it
            found.update(chunk.split("_"))
            continue
        for cjk, word in _WORDS.findall(chunk):
            if word:
                found.add(word)
            else:
                found.update(cjk)
                found.update(_bigrams(cjk))
    found.discard("")
    return found - _STOPWORDS


@lru_cache(maxsize=256)
def query_terms(query: str) -> frozenset:
    """The query's terms: like `terms`, but a CJK run of two or more characters counts only by
    its bigrams (single characters would match nearly every Chinese text), and question words
    such as 为什么 / 怎么 are left out."""
    found: set[str] = set()
    for cjk, word in _WORDS.findall(query.casefold()):
        if word:
            if word not in _STOPWORDS:
                found.add(word)
        elif len(cjk) == 1:
            found.add(cjk)
        else:
            for piece in _CJK_STOPWORDS.split(cjk):
                found.update(_bigrams(piece))  # a piece left with one character adds nothing
    return frozenset(found)


def overlap(wanted: frozenset, found: set | frozenset) -> float:
    """Share of the wanted terms that were found: 0.0 (none) to 1.0 (all)."""
    return len(wanted & found) / len(wanted) if wanted else 0.0


def relevance(query: str, text: str) -> float:
    """Share of the query's terms found in the text: 0.0 (none) to 1.0 (all)."""
    return overlap(query_terms(query), terms(text))


def recency(timestamp: datetime, now: datetime, half_life_hours: float = 24.0) -> float:
    """1.0 for something written now, 0.5 one half-life ago, 0.25 two half-lives ago...
    Anything dated after `now` counts as new (1.0)."""
    age = (as_datetime(now) - as_datetime(timestamp)).total_seconds()
    return _decay(age, half_life_hours)


def _decay(age_seconds: float, half_life_hours: float) -> float:
    return 0.5 ** (max(age_seconds, 0.0) / 3600 / half_life_hours)


def default_now(packets: Iterable[Packet]) -> datetime:
    """The newest packet's time: scores then depend on the inputs only, never on the clock."""
    return max((p.timestamp for p in packets), default=datetime(1970, 1, 1, tzinfo=timezone.utc))


def packet_relevance(packet: Packet, query: str) -> float:
    """The packet's given relevance if it has one, else `relevance(query, packet.content)`."""
    if packet.relevance is not None:
        return packet.relevance
    return overlap(query_terms(query), packet.terms)


def _value(packet: Packet, rel: float, rec: float, config: ContextConfig) -> float:
    return packet.priority * (config.relevance_weight * rel + config.recency_weight * rec)


def score(packet: Packet, query: str, config: ContextConfig, now: datetime) -> float:
    """priority * (relevance_weight * relevance + recency_weight * recency)."""
    rec = recency(packet.timestamp, now, config.half_life_hours)
    return _value(packet, packet_relevance(packet, query), rec, config)


# --------------------------------------------------------------------------- select: the fill


@dataclass
class Row:
    """One candidate and what became of it (the widget's table, the lesson's explanations)."""

    packet: Packet
    relevance: float | None  # None for pinned packets: they are not scored
    recency: float | None
    score: float | None
    status: str  # "pinned", "selected", "did not fit", "below min relevance", "redundant", "cut"
    rank: int | None = None  # order of choice among the selected (0 = chosen first)

    @property
    def tokens(self) -> int:
        return self.packet.tokens


def _rank_key(row: Row):
    # Highest score first; ties: cheaper first, then newer, then by text (input order never matters).
    p = row.packet
    return (-row.score, p.tokens, -p.epoch, p.source, p.content)


def _jaccard(a: frozenset, b: frozenset) -> float:
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared) if a or b else 0.0


def explain_selection(packets: Sequence[Packet], query: str, budget: int,
                      config: ContextConfig | None = None, now: datetime | None = None) -> list[Row]:
    """Score every packet and fill `budget` tokens greedily; return one Row per packet.

    The fill walks the candidates from the best score down and takes each one that still fits.
    A packet that does not fit is skipped, and the walk goes on: a smaller packet further down
    may still fit (stopping at the first misfit would leave the budget half empty).
    """
    config = config or ContextConfig()
    if not isinstance(budget, int) or budget < 0:
        raise ValueError(f"budget must be a whole number of tokens >= 0, got {budget!r}")
    now = (as_datetime(now) if now is not None else default_now(packets)).timestamp()
    rows = []
    for p in packets:
        rel = packet_relevance(p, query)
        rec = _decay(now - p.epoch, config.half_life_hours)
        rows.append(Row(p, rel, rec, _value(p, rel, rec, config), "below min relevance"))

    eligible = sorted((r for r in rows if r.relevance >= config.min_relevance), key=_rank_key)
    if config.diversity > 0:
        _fill_diverse(eligible, budget, config.diversity)
    else:
        for rank, row in enumerate(greedy_fill(eligible, budget)):
            row.status, row.rank = "selected", rank
        for row in eligible:
            if row.rank is None:
                row.status = "did not fit"
    return rows


def greedy_fill(ranked: Sequence[Packet], budget: int) -> list[Packet]:
    """Walk the packets in the order given (best first) and take each one that still fits in
    `budget` tokens. A packet that does not fit is skipped and the walk goes on: a smaller one
    further down may still fit. (Works for anything with a `tokens` attribute.)"""
    chosen, used = [], 0
    for p in ranked:
        if used + p.tokens <= budget:
            chosen.append(p)
            used += p.tokens
    return chosen


def _fill_diverse(ranked: list[Row], budget: int, diversity: float) -> None:
    """The fill with a penalty for repeating what is already chosen (sets each row's status).

    Lazy greedy: a candidate's penalty can only grow as more is chosen, so a stale score is an
    upper bound; recompute it when it reaches the top, and take it if it still beats the rest.
    """
    heap = [(-row.score, order, row) for order, row in enumerate(ranked)]
    heapq.heapify(heap)
    chosen_terms, used = [], 0
    while heap:
        _, order, row = heapq.heappop(heap)
        if used + row.tokens > budget:
            row.status = "did not fit"
            continue
        similarity = max((_jaccard(row.packet.terms, t) for t in chosen_terms), default=0.0)
        adjusted = row.score - diversity * similarity
        if heap and adjusted < -heap[0][0]:
            heapq.heappush(heap, (-adjusted, order, row))
            continue
        if similarity > 0 and adjusted <= 0:
            row.status = "redundant"
            continue
        row.status, row.rank = "selected", len(chosen_terms)
        chosen_terms.append(row.packet.terms)
        used += row.tokens


def select(packets: Sequence[Packet], query: str, budget: int,
           config: ContextConfig | None = None, now: datetime | None = None) -> list[Packet]:
    """The packets worth sending, best first, together at most `budget` tokens.

    Score each packet (see `score`), drop those below `config.min_relevance`, then walk the
    rest from the best score down taking every packet that still fits. `now` defaults to the
    newest packet's time.
    """
    rows = explain_selection(packets, query, budget, config, now)
    chosen = sorted((r for r in rows if r.status == "selected"), key=lambda r: r.rank)
    return [r.packet for r in chosen]


# --------------------------------------------------------------------------- structure


def _block(text: str, what: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{what} must be a non-empty string")
    return "\n".join(_not_a_header(line.rstrip()) for line in text.strip().splitlines()) + "\n"


def _entry_order(p: Packet):
    return (p.epoch, p.source, p.content)


def _sections(task: str, packets: Iterable[Packet], output: str,
              cuts: Mapping[str, str] | None) -> dict[str, str]:
    """The text of each section, header included, in the fixed order."""
    by_section: dict[str, list[Packet]] = {name: [] for name in SECTIONS}
    for p in packets:
        if not isinstance(p, Packet):
            raise TypeError(f"expected Packet objects, got {type(p).__name__}")
        by_section[p.section].append(p)
    cuts = cuts or {}
    texts = {}
    for name in SECTIONS:
        if name == "Task":
            body = _block(task, "task")
        elif name == "Output":
            body = _block(output, "output instructions")
        else:
            body = "".join(p.entry for p in sorted(by_section[name], key=_entry_order))
        texts[name] = f"[{name}]\n{body}{cuts.get(name, '')}"
    return texts


def structure(task: str, packets: Iterable[Packet], output: str = DEFAULT_OUTPUT,
              cuts: Mapping[str, str] | None = None) -> str:
    """Render the context: the six sections in fixed order, each with its header even when empty.

    Inside a section, entries are in time order (then source, then text), so the same packets
    give the same bytes whatever order they arrive in: a stable prefix a provider can cache.
    `cuts` maps a section to a note that compress appends where it removed something.
    """
    return "".join(_sections(task, packets, output, cuts).values())


def section_tokens(task: str, packets: Iterable[Packet], output: str = DEFAULT_OUTPUT,
                   cuts: Mapping[str, str] | None = None) -> dict[str, int]:
    """Tokens each section takes in `structure(...)`'s text (headers included); they add up to
    the count of the whole text."""
    return {name: count_tokens(text)
            for name, text in _sections(task, packets, output, cuts).items()}


def mandatory_tokens(task: str, pinned: Iterable[Packet], output: str = DEFAULT_OUTPUT) -> int:
    """Tokens of the context with nothing optional in it: headers, policies, task, output."""
    return count_tokens(structure(task, [p for p in pinned if p.pinned], output))


def candidate_budget(task: str, pinned: Iterable[Packet], config: ContextConfig,
                     output: str = DEFAULT_OUTPUT) -> int:
    """Tokens left for candidates: budget - reserve - the mandatory sections (headers, pinned
    policies, task, output). A budget that cannot hold the mandatory sections is an error,
    never a silent overflow."""
    floor = mandatory_tokens(task, pinned, output)
    if floor > config.limit:
        raise BudgetError(
            f"budget {config.budget} minus reserve {config.reserve} leaves {config.limit} tokens, "
            f"but the role & policies, task and output instructions alone need {floor}; "
            f"raise the budget, lower the reserve or shorten them")
    return config.limit - floor


# --------------------------------------------------------------------------- compress


@dataclass(frozen=True)
class Compressed:
    text: str
    tokens: int
    kept: list[Packet]
    dropped: list[Packet]
    cuts: dict[str, str]  # section -> the note left where entries were removed


def _cut_note(dropped: Sequence[Packet]) -> str:
    n, t = len(dropped), sum(p.tokens for p in dropped)
    return f"- [cut] {n} {'entry' if n == 1 else 'entries'} ({t} tokens) left out here to fit the token budget\n"


def _cut_notes(dropped: Sequence[Packet]) -> dict[str, str]:
    by_section: dict[str, list[Packet]] = {}
    for p in dropped:
        by_section.setdefault(p.section, []).append(p)
    return {name: _cut_note(by_section[name]) for name in SECTIONS if name in by_section}


def compress(task: str, packets: Sequence[Packet], output: str, limit: int) -> Compressed:
    """Make the rendered context fit `limit` tokens, exactly counted.

    `packets` are in order of value, most valuable first (as `select` returns them). Entries
    are removed from the least valuable end until the context fits; then, like the fill, the
    removed ones are tried again from the most valuable down, and each that still fits goes
    back in (dropping one large entry can leave room for several small ones). The role &
    policies, the task and the output instructions are never touched. Each section that lost
    entries gets a `- [cut] ...` line saying how many and how many tokens. A limit that cannot
    hold the untouchable parts (plus the cut notes) raises BudgetError rather than returning
    something over the limit.
    """
    if not isinstance(limit, int) or limit < 0:
        raise ValueError(f"limit must be a whole number of tokens >= 0, got {limit!r}")
    pinned = [p for p in packets if p.pinned]
    optional = [p for p in packets if not p.pinned]
    floor = mandatory_tokens(task, pinned, output)
    if floor > limit:
        raise BudgetError(
            f"a limit of {limit} tokens cannot hold the role & policies, task and output "
            f"instructions, which need {floor} tokens; raise the budget or shorten them")
    text = structure(task, packets, output)
    total = count_tokens(text)
    if total <= limit:
        return Compressed(text, total, list(packets), [], {})

    def attempt(kept_flags: list[bool], kept_tokens: int) -> Compressed | None:
        """The context with these entries kept, if it fits (estimate first, then exactly)."""
        dropped = [p for p, keep in zip(optional, kept_flags) if not keep]
        cuts = _cut_notes(dropped)
        if floor + kept_tokens + sum(count_tokens(c) for c in cuts.values()) > limit:
            return None
        kept = pinned + [p for p, keep in zip(optional, kept_flags) if keep]
        text = structure(task, kept, output, cuts)
        total = count_tokens(text)  # the exact check; the sum above is only a shortcut
        return Compressed(text, total, kept, dropped, cuts) if total <= limit else None

    flags = [True] * len(optional)
    kept_tokens = sum(p.tokens for p in optional)
    best = None
    for i in range(len(optional) - 1, -1, -1):  # drop from the least valuable end
        flags[i] = False
        kept_tokens -= optional[i].tokens
        best = attempt(flags, kept_tokens)
        if best:
            break
    if best is None:
        notes = sum(count_tokens(c) for c in _cut_notes(optional).values())
        raise BudgetError(
            f"a limit of {limit} tokens holds the untouchable sections ({floor} tokens) but "
            f"not the notes saying what was cut ({notes} more); raise the budget")
    for i, packet in enumerate(optional):  # keep trying: put back whatever still fits
        if flags[i] or floor + kept_tokens + packet.tokens > limit:
            continue
        flags[i] = True
        trial = attempt(flags, kept_tokens + packet.tokens)
        if trial:
            best, kept_tokens = trial, kept_tokens + packet.tokens
        else:
            flags[i] = False
    return best


# --------------------------------------------------------------------------- the pipeline


@dataclass(frozen=True)
class Built:
    """A finished context and how it came to be."""

    text: str
    tokens: int  # exact count of `text`
    limit: int  # budget - reserve
    rows: list[Row]  # every candidate with its scores and status
    sections: dict[str, int]  # tokens per section
    cuts: dict[str, str] = field(default_factory=dict)  # section -> cut note, if compress cut
    failures: dict[str, str] = field(default_factory=dict)  # source -> error, from gather

    @property
    def chosen(self) -> list[Packet]:
        """The packets in the context, in order of value (pinned ones first)."""
        pinned = [r.packet for r in self.rows if r.status == "pinned"]
        picked = sorted((r for r in self.rows if r.status == "selected"), key=lambda r: r.rank)
        return pinned + [r.packet for r in picked]


def build_context(task: str, packets: Sequence[Packet], config: ContextConfig | None = None,
                  output: str = DEFAULT_OUTPUT, now: datetime | None = None) -> Built:
    """Select, structure and compress: the context for `task` from candidate `packets`.

    The fill gets exactly the room the mandatory sections leave (`candidate_budget`), so
    compress normally has nothing to do; it is the guarantee that the limit holds.
    Raises BudgetError when the budget cannot hold the mandatory sections.
    """
    config = config or ContextConfig()
    pinned = [p for p in packets if p.pinned]
    candidates = [p for p in packets if not p.pinned]
    room = candidate_budget(task, pinned, config, output)
    now = as_datetime(now) if now is not None else default_now(packets)
    rows = explain_selection(candidates, task, room, config, now)
    chosen = [r.packet for r in sorted((r for r in rows if r.status == "selected"),
                                       key=lambda r: r.rank)]
    done = compress(task, pinned + chosen, output, config.limit)
    gone = {id(p) for p in done.dropped}
    for row in rows:
        if id(row.packet) in gone:
            row.status, row.rank = "cut", None
    pinned_rows = [Row(p, None, None, None, "pinned") for p in pinned]
    return Built(
        text=done.text,
        tokens=done.tokens,
        limit=config.limit,
        rows=pinned_rows + rows,
        sections=section_tokens(task, done.kept, output, done.cuts),
        cuts=done.cuts,
    )


Source = Union[Callable[[str], Iterable[Packet]], Iterable[Packet]]


def gather(sources: Mapping[str, Source], task: str) -> tuple[list[Packet], dict[str, str]]:
    """Collect candidate packets from every source.

    A source is a function of the task returning packets, or simply a list of packets. A
    source that raises, or returns something that is not a Packet, is skipped as a whole and
    reported in the second value ({source name: what went wrong}); the others still count.
    """
    packets: list[Packet] = []
    failures: dict[str, str] = {}
    for name, source in sources.items():
        try:
            found = list(source(task) if callable(source) else source)
        except Exception as exc:  # a broken source must not take the whole context down
            failures[name] = f"{type(exc).__name__}: {exc}"
            continue
        wrong = [type(p).__name__ for p in found if not isinstance(p, Packet)]
        if wrong:
            failures[name] = f"returned {wrong[0]} where a Packet was expected"
            continue
        packets.extend(found)
    return packets, failures


class ContextBuilder:
    """Gather -> Select -> Structure -> Compress, with the sources and config kept together.

        builder = ContextBuilder({"system": [policy], "notes": tool.as_source()}, config)
        built = builder.build("Why does linking libpng fail?")
        print(built.text, built.failures)
    """

    def __init__(self, sources: Mapping[str, Source], config: ContextConfig | None = None,
                 output: str = DEFAULT_OUTPUT):
        self.sources = dict(sources)
        self.config = config or ContextConfig()
        self.output = output

    def build(self, task: str, now: datetime | None = None) -> Built:
        packets, failures = gather(self.sources, task)
        built = build_context(task, packets, self.config, self.output, now)
        return replace(built, failures=failures)
