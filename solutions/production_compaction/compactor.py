"""The five layers together (Chapter 11): each toggled, the cheap ones first.

    1 budget   large tool results to files, a preview in context (frozen)     every request
    2 noise    progress bars and passing-test lines deleted                  every request
    3 micro    old tool results cleared near the limit (cache lost after it)  above micro_at
    4 archive  old turns become one record each in a log                      above archive_at,
                                                                             down to archive_to
    5 full     a model summary, two stages, behind a circuit breaker          above full_at

The agent keeps its full transcript (append-only); before each request it passes it to the
compactor, which returns the context to send. The compactor remembers what it decided: the
frozen budget decisions, the results it cleared, how many turns it archived or summarised,
the archive records and the last summary, and the breaker. Layer 5's first stage is the
session memory the earlier layers already built (archive everything but the last turns, no
model call); only if that is not enough does it call the summariser. After a full compaction
it waits `cooldown` requests before it may run again (hysteresis); archiving has its own,
a high and a low watermark. If the context is still over the window after every enabled layer
(the breaker is open, or layer 5 is off), the oldest whole turns are dropped so the request
fits: a sliding window, the loss the layers exist to avoid (counted in `dropped_turns`).

Over the window is never silent. If even that is not enough (the head, the archive or the last
turn alone is over the window), the compactor logs an "over" event and raises `ContextOverflow`,
which says how large each part is and carries the context (a provider would answer HTTP 400).
With no layer at all nothing is touched: the full transcript is sent, and a request over the
window gets an "over" event, not an exception (it is the baseline the layers are measured
against).

The transcript must pair calls and results (Chapter 04's `check_pairing`): one that does not is
refused with a ValueError that says where, as `compact` refuses it. Transcripts from agents that
reuse a call id in a later turn go through `solutions.compaction.unique_call_ids` first.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable

from course.givens.production_compaction import CircuitBreaker, ResultStore
from course.tracing import tag
from solutions.compaction import check_pairing, split_head, split_turns
from solutions.production_compaction.archive import archive_message, archive_turn
from solutions.production_compaction.budget import budget_tool_results
from solutions.production_compaction.full import compact_with_breaker
from solutions.production_compaction.micro import micro_compact
from solutions.production_compaction.noise import NOISE_RULES, drop_noise
from solutions.tokens import count_request_tokens

LAYERS = ("budget", "noise", "micro", "archive", "full")


@dataclass(frozen=True)
class Settings:
    window: int = 32_000            # tokens the model accepts
    budget_chars: int = 4_000       # layer 1: results longer than this go to a file
    micro_at: float = 0.80          # layer 3: clear old results above this share of the window
    micro_keep: int = 6             # ... all but the last this many results
    archive_at: float = 0.60        # layer 4: archive above this share ...
    archive_to: float = 0.35        # ... down to this share (hysteresis)
    full_at: float = 0.85           # layer 5: above this share, after layers 1-4
    keep_turns: int = 4             # turns never archived or summarised
    max_failures: int = 3           # layer 5's circuit breaker
    cooldown: int = 5               # requests before layer 5 may run again
    noise_rules: Mapping = field(default_factory=lambda: dict(NOISE_RULES))


class TokenMeter:
    """Request sizes under Chapter 02's template, each distinct message tokenised once."""

    def __init__(self, tools: list[dict] | None = None):
        self.tools = tools
        self._empty = count_request_tokens([])
        self._base = count_request_tokens([], tools)
        self._shares: dict = {}

    @staticmethod
    def _key(m: dict) -> tuple:
        # Strings cache their hash, so a key made of the message's own strings is cheap.
        calls = m.get("tool_calls")
        return (m.get("role"), m.get("tool_call_id"), m.get("name"), m.get("content"),
                json.dumps(calls, sort_keys=True) if calls else None)

    def __call__(self, messages: list[dict]) -> int:
        total = self._base
        for m in messages:
            key = self._key(m) if isinstance(m.get("content"), (str, type(None))) else \
                json.dumps(m, sort_keys=True, ensure_ascii=False)
            share = self._shares.get(key)
            if share is None:
                share = self._shares[key] = count_request_tokens([m]) - self._empty
            total += share
        return total


@dataclass
class Event:
    request: int
    layer: str
    detail: str
    tokens_before: int
    tokens_after: int
    edit_point: int | None = None


class ContextOverflow(ValueError):
    """The compactor could not bring the context within the window (every enabled layer ran and
    the oldest turns were dropped). `context` is what it would send, `tokens` its size."""

    def __init__(self, message: str, context: list[dict], tokens: int, window: int):
        super().__init__(message)
        self.context, self.tokens, self.window = context, tokens, window


PARTS = ("budget_tool_results", "drop_noise", "archive_turn", "compact_with_breaker")


class LayeredCompactor:
    def __init__(self, layers=LAYERS, settings: Settings = Settings(),
                 summarize: Callable[[list[dict]], str] | None = None,
                 tools: list[dict] | None = None, store: ResultStore | None = None,
                 parts: Mapping[str, Callable] | None = None):
        unknown = set(layers) - set(LAYERS)
        if unknown:
            raise ValueError(f"unknown layers {sorted(unknown)}; choose from {LAYERS}")
        if "full" in layers and summarize is None:
            raise ValueError("layer 5 (full) needs a summarize function")
        self.layers = frozenset(layers)
        self.settings, self.summarize, self.tools = settings, summarize, tools
        self.store = store if store is not None else ResultStore()
        impl = {"budget_tool_results": budget_tool_results, "drop_noise": drop_noise,
                "archive_turn": archive_turn, "compact_with_breaker": compact_with_breaker}
        impl.update(parts or {})
        self.parts = impl
        self.meter = TokenMeter(tools)
        self.breaker = CircuitBreaker(settings.max_failures)
        self.cleared: dict = {}           # (call id, content) -> what micro shows instead
        self.cut = 0                      # turns absorbed into the archive or a summary
        self.records: list[str] = []
        self._record_of: dict[int, str] = {}
        self.summary: dict | None = None  # the last full compaction's summary message
        self.requests = 0
        self.cooldown_until = 0
        self.events: list[Event] = []
        self.dropped_turns = 0
        self._clean: dict[int, tuple[dict, dict]] = {}  # id -> (message held, cleaned)

    # ------------------------------------------------------------------ building the context
    def _memory(self) -> list[dict]:
        out = [self.summary] if self.summary else []
        if self.records:
            out.append(archive_message(self.records))
        return out

    def _kept(self, turns: list[list[dict]], clear_now: bool = False) -> tuple[list[dict], int | None]:
        kept = [m for turn in turns[self.cut:] for m in turn]
        originals = [m.get("content") for m in kept]  # layers 1-2 keep the messages in order
        if "budget" in self.layers:
            kept = self.parts["budget_tool_results"](kept, self.settings.budget_chars, self.store)
        if "noise" in self.layers:  # pure, so each message is cleaned once
            new = [m for m in kept if id(m) not in self._clean]
            for m, clean in zip(new, self.parts["drop_noise"](new, self.settings.noise_rules)):
                self._clean[id(m)] = (m, clean)
            kept = [self._clean[id(m)][1] for m in kept]
        edit = None
        if "micro" in self.layers or self.cleared:
            kept, edit = micro_compact(kept, self.settings.micro_keep, self.store, self.cleared,
                                       clear_now and "micro" in self.layers, originals)
        return kept, edit

    def _context(self, head, turns, clear_now=False) -> tuple[list[dict], int | None]:
        memory = self._memory()
        kept, edit = self._kept(turns, clear_now)
        if edit is not None:
            edit += len(head) + len(memory)
        return head + memory + kept, edit

    def _archive(self, head, turns, target: float, keep: int) -> list[dict]:
        context, _ = self._context(head, turns)
        before = self.meter(context)
        n = 0
        while self.meter(context) > target and self.cut < len(turns) - keep:
            record = self.parts["archive_turn"](turns[self.cut])
            self.records.append(record)
            self.cut += 1
            n += 1
            context, _ = self._context(head, turns)
        if n:
            self.events.append(Event(self.requests, "archive", f"{n} turns archived",
                                     before, self.meter(context)))
        return context

    def __call__(self, history: list[dict]) -> list[dict]:
        """The context to send for the next request, given the full transcript so far. Raises
        ValueError for a transcript whose pairing is broken, ContextOverflow when the layers
        cannot make it fit the window."""
        verdict = check_pairing(history)
        if not verdict:
            fix = (" (some agents reuse call ids: solutions.compaction.unique_call_ids(messages) "
                   "returns a copy in which every reused id is made unique)"
                   if verdict.kind == "reused_id" else "")
            raise ValueError(f"refusing to compact a transcript whose pairing is broken: "
                             f"{verdict}{fix}")
        s, w = self.settings, self.settings.window
        self.requests += 1
        head, rest = split_head(history)
        turns = split_turns(rest)
        context, _ = self._context(head, turns)
        size = self.meter(context)
        if "micro" in self.layers and size > s.micro_at * w:
            context, edit = self._context(head, turns, clear_now=True)
            if edit is not None:
                after = self.meter(context)
                self.events.append(Event(self.requests, "micro", "old tool results cleared",
                                         size, after, edit))
                size = after
        if "archive" in self.layers and size > s.archive_at * w:
            context = self._archive(head, turns, s.archive_to * w, s.keep_turns)
            size = self.meter(context)
        if "full" in self.layers and size > s.full_at * w and self.requests >= self.cooldown_until:
            if "archive" in self.layers:  # stage 1: the session memory, no model call
                context = self._archive(head, turns, s.archive_to * w, s.keep_turns)
                size = self.meter(context)
            if size > s.full_at * w:      # stage 2: the model
                before = size
                new = self.parts["compact_with_breaker"](context, self.summarize, self.breaker,
                                                         s.keep_turns)
                if new != context:
                    self.summary = tag("summary", new[len(head)])  # the trace's part for it
                    self.records = []
                    self.cut = len(turns) - s.keep_turns
                    self.cooldown_until = self.requests + s.cooldown
                    context, _ = self._context(head, turns)
                    size = self.meter(context)
                    self.events.append(Event(self.requests, "full", "model summary", before, size))
                else:
                    self.events.append(Event(self.requests, "full",
                                             f"summariser failed (breaker {self.breaker.state})",
                                             before, size))
        if size > w and self.layers:  # nothing else helped: drop the oldest whole turns to fit
            before, n = size, 0
            while size > w and self.cut < len(turns) - 1:
                self.cut += 1
                n += 1
                context, _ = self._context(head, turns)
                size = self.meter(context)
            if n:
                self.dropped_turns += n
                self.events.append(Event(self.requests, "drop", f"{n} oldest turns dropped",
                                     before, size))
        if size > w:
            self._over(head, context, size)
        return context

    def _over(self, head: list[dict], context: list[dict], size: int) -> None:
        """Log the request that is over the window; with layers enabled, refuse it."""
        w = self.settings.window
        self.events.append(Event(self.requests, "over", f"{size - w:,} tokens over the window",
                                 size, size))
        if not self.layers:
            return
        memory = self._memory()
        parts = {"the head (system prompt and task)": self.meter(head) - self.meter([]),
                 "the archive and summary": self.meter(memory) - self.meter([]) if memory else 0,
                 "the last turn": self.meter(context[len(head) + len(memory):]) - self.meter([])}
        raise ContextOverflow(
            f"the context is {size:,} tokens, over the window of {w:,} after every enabled layer "
            f"({', '.join(sorted(self.layers, key=LAYERS.index))}) ran and the oldest turns were "
            f"dropped: " + ", ".join(f"{name} {n:,}" for name, n in parts.items())
            + " tokens (the tools' definitions make up the rest); a provider would refuse it "
              "(HTTP 400). Raise the window, enable layer 1 for large results, or shorten the "
              "head", context, size, w)
