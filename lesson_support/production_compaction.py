"""Chapter 11's lesson support: the replayed run, its probes, and measuring each configuration of
the layered compactor on the teaching model. The answers are in `solutions.production_compaction`;
the run, its loader and `visible` are the chapter's givens (`course.givens.production_compaction`).

The run is `data/production_compaction/run.json` (written by `make_run.py` beside it): a system
prompt, the task, then 212 steps, each one assistant message and its tool results. Request j
is what the agent sends before step j+1's reply: the compactor's view of steps 1..j.

Measuring: the compactor sees every step (its decisions depend on all of them), but only every
`stride`-th request is sent to the model (the lesson gives each configuration a private teaching
model, so a fresh prompt cache, and with a provider configured replays one on it too),
which keeps the lesson to a few minutes. The token sizes of every request are counted offline
(the saw-tooth); `cached_tokens` comes from the sent ones, whose cache was warmed only by the
requests sent before them, so hit rates are those of an agent that sends every `stride`-th
request (a lower bound of what an agent sending all of them would see). A replay's requests
(sent and summaries, not the probes) are one agent run in the trace, named after the
configuration (course.tracing), so the lesson reads the same figures from the trace.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from course import tracing
from course.givens.production_compaction import Run, context_text, visible
from course.usage import NOT_REPORTED, read_usage
from course.tables import text_table
from solutions.compaction import ModelSummarizer, check_pairing
from solutions.costs import SEED_PRICES, price_usages
from solutions.production_compaction import (LAYERS, LayeredCompactor, ResultStore, Settings,
                                             TRANSCRIPT_PATH)
from lesson_support.widgets.progress import Progress  # noqa: F401  (lesson 11 imports it from here)

CONFIGS: dict[str, tuple[str, ...]] = {
    "no compaction": (),
    "1 budget": ("budget",),
    "1+2 noise": ("budget", "noise"),
    "1+2+3 micro": ("budget", "noise", "micro"),
    "1-4 archive": ("budget", "noise", "micro", "archive"),
    "all five": LAYERS,
    # layer 5 alone; its summariser is Chapter 04's ModelSummarizer, which on the teaching model
    # gets the teaching model's rule-based summary, not a language model's: the label says so
    "5 only (teaching-model summary)": ("full",),
}
STRIDE = 20


def transcript_jsonl(messages: list[dict]) -> str:
    return "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)


# ------------------------------------------------------------------ probes
@dataclass
class ProbeResult:
    id: str
    kind: str
    answered: bool
    called_again: bool = False
    answer: str = ""


def ask_probe(probe: dict, messages: list[dict], tools, client, model) -> ProbeResult:
    """Put an `ask` probe to the model after `messages`: answered from the window, or a call."""
    reply = client.chat.completions.create(
        model=model, messages=messages + [{"role": "user", "content": probe["question"]}],
        tools=tools).choices[0].message
    if reply.tool_calls:
        return ProbeResult(probe["id"], probe["kind"], False, True,
                           f"calls {reply.tool_calls[0].function.name} "
                           f"{reply.tool_calls[0].function.arguments}")
    text = reply.content or ""
    return ProbeResult(probe["id"], probe["kind"], all(e in text for e in probe["expect"]),
                       False, text)


def score_probes(run: Run, messages: list[dict], client=None, model=None) -> list[ProbeResult]:
    """Every probe against the final context: `visible` ones by reading it, `ask` ones by the
    model (skipped, as unanswered, when no client is given)."""
    out = []
    for probe in run.probes:
        if probe["how"] == "ask" and client is not None:
            out.append(ask_probe(probe, messages, run.tools, client, model))
        else:
            out.append(ProbeResult(probe["id"], probe["kind"],
                                   probe["how"] == "visible" and visible(probe, messages)))
    return out


# ------------------------------------------------------------------ replaying a configuration
class CountingSummarizer:
    """Chapter 04's ModelSummarizer, keeping the usage of every summary request."""

    def __init__(self, client, model, tools):
        self.inner = ModelSummarizer(client, model, tools)
        self.usages = []

    def __call__(self, prefix):
        text = self.inner(prefix)
        self.usages.append(self.inner.last_usage)
        return text


@dataclass
class Measurement:
    config: str
    layers: tuple
    sizes: list = field(default_factory=list)        # tokens of every request (offline)
    sent: list = field(default_factory=list)         # (request number, prompt, cached)
    usages: list = field(default_factory=list)       # every usage record: sent + summaries
    probes: list = field(default_factory=list)
    events: list = field(default_factory=list)
    over_window: int = 0
    dropped_turns: int = 0
    pairing_ok: bool = True
    final: list = field(default_factory=list)
    requests: list = field(default_factory=list, repr=False)  # (j, context) of the sent ones,
    #                                       kept when computed before sending, to compare replays
    same_as: str | None = None  # the replay whose figures these are (identical requests)

    @property
    def input_tokens(self) -> int:
        """Total input tokens of every request of the run (counted offline)."""
        return sum(self.sizes)

    @property
    def sent_prompt(self) -> int:
        return sum(read_usage(u).prompt for u in self.usages)

    @property
    def sent_cached(self) -> int | None:
        """Cached tokens over every request; None if any usage did not report them."""
        cached = [read_usage(u).cached for u in self.usages]
        return None if None in cached else sum(cached)

    @property
    def hit_rate(self) -> float | None:
        """Share of the prompt tokens read from the cache; None when that was not reported."""
        if self.sent_cached is None:
            return None
        return self.sent_cached / self.sent_prompt if self.sent_prompt else 0.0

    @property
    def cost(self) -> float:
        return price_usages(self.usages, SEED_PRICES)

    @property
    def answered(self) -> int:
        return sum(p.answered for p in self.probes)

    @property
    def called_again(self) -> int:
        return sum(p.called_again for p in self.probes)


class _NeedsModel(Exception):
    """Raised by the offline pass's stand-in summariser: layer 5 wants a model's answer."""


def _offline(run: Run, layers, settings: Settings, steps: list, sent_at: set) -> tuple | None:
    """(compactor, every request's size, the contexts to send, the final context) when no layer
    asks a model for anything; None as soon as layer 5 would call its summariser (a model's
    answer then shapes later requests, so they cannot be computed before sending)."""
    asked = []

    def summarize(prefix):
        asked.append(len(prefix))
        raise _NeedsModel

    compactor = LayeredCompactor(layers, settings, summarize=summarize if "full" in layers
                                 else None, tools=run.tools, store=ResultStore())
    history, sizes, sent, ok = run.head(), [], [], True
    for j, step in enumerate(steps, 1):
        history = history + step["messages"]
        context = compactor(history)
        if asked:
            return None
        ok = ok and bool(check_pairing(context))
        sizes.append(compactor.meter(context))
        if j in sent_at:
            sent.append((j, context))
    return compactor, sizes, sent, ok


def replay_config(run: Run, config: str, layers, client, model, stride: int = STRIDE,
                  settings: Settings = Settings(), summarize=None, probes: bool = True,
                  history_steps=None, measured: dict | None = None) -> Measurement:
    """Run the whole transcript through a LayeredCompactor with `layers`; send every `stride`-th
    request (and the last) to the model; score the probes on the final context.

    `measured`: the configurations this cell already replayed on the same kind of model, each
    from a cold cache. When no layer needs a model's answer, every context is computed first;
    if the requests to send are byte-identical to one of those replays', its figures are
    taken instead of sending them again (the same requests to the same fresh simulation get
    the same answers), and `same_as` names it."""
    steps = run.steps if history_steps is None else history_steps
    sent_at = {j for j in range(1, len(steps) + 1) if j % stride == 0 or j == len(steps)}
    offline = None if summarize is not None else _offline(run, layers, settings, steps, sent_at)
    m = Measurement(config, tuple(layers))
    if offline is None:
        return _replay_interleaved(run, m, layers, client, model, sent_at, settings,
                                   summarize, probes, steps)
    compactor, m.sizes, m.requests, m.pairing_ok = offline
    m.over_window = sum(size > settings.window for size in m.sizes)
    m.events, m.dropped_turns, m.final = compactor.events, compactor.dropped_turns, m.requests[-1][1]
    m.compactor = compactor
    twin = next((t for t in (measured or {}).values()
                 if t.sizes == m.sizes and t.requests == m.requests), None)
    if twin is not None:
        m.sent, m.usages, m.probes, m.same_as = twin.sent, twin.usages, twin.probes, twin.config
        return m
    with tracing.agent_run(config):  # the replay's requests, not its probes: a run in the trace
        for j, context in m.requests:
            _send(m, j, context, run.tools, client, model)
    if probes:
        m.probes = score_probes(run, m.final, client, model)
    return m


def _send(m: Measurement, j: int, context: list, tools, client, model) -> None:
    usage = client.chat.completions.create(model=model, messages=context, tools=tools).usage
    read = read_usage(usage)  # cached None: not reported by the provider
    m.sent.append((j, read.prompt, read.cached))
    m.usages.append(usage)


def _replay_interleaved(run: Run, m: Measurement, layers, client, model, sent_at: set,
                        settings: Settings, summarize, probes: bool, steps: list) -> Measurement:
    """The replay when layer 5 calls a model: its summary requests and the sent requests reach
    the model in the order an agent would send them (they share one prompt cache)."""
    summarize = summarize or (CountingSummarizer(client, model, run.tools) if "full" in layers
                              else None)
    compactor = LayeredCompactor(layers, settings, summarize=summarize, tools=run.tools,
                                 store=ResultStore())
    history = run.head()
    with tracing.agent_run(m.config):  # its sent and summary requests, as in replay_config
        for j, step in enumerate(steps, 1):
            history = history + step["messages"]
            context = compactor(history)
            m.pairing_ok = m.pairing_ok and bool(check_pairing(context))
            size = compactor.meter(context)
            m.sizes.append(size)
            m.over_window += size > settings.window
            if j in sent_at:
                _send(m, j, context, run.tools, client, model)
    if isinstance(summarize, CountingSummarizer):
        m.usages.extend(summarize.usages)
    m.events, m.dropped_turns, m.final = compactor.events, compactor.dropped_turns, context
    m.compactor = compactor
    if probes:
        m.probes = score_probes(run, context, client, model)
    return m


def config_table(results: dict) -> str:
    rows = [[name, f"{m.input_tokens:,}", f"{max(m.sizes):,}", m.over_window, f"{m.sent_prompt:,}",
             "n/r" if m.hit_rate is None else f"{m.hit_rate:.0%}", f"{m.cost:.4f}",
             f"{m.answered:>3}/{len(m.probes):<3}", m.called_again, m.dropped_turns]
            for name, m in results.items()]
    table = text_table(["configuration", "input tokens", "peak", "over", "sent", "hit rate", "cost $", "probes",
                        "again", "dropped"], rows, "<>>>>>>>>>",
                       widths=[max([24] + [len(name) for name in results]), 12, 7, 5, 9, 8, 8, 7, 5, 7])
    if any(m.hit_rate is None for m in results.values()):
        table += f"\nn/r: cached tokens {NOT_REPORTED}; its cost prices them as uncached"
    return table


def probe_table(results: dict, run: Run) -> str:
    names = list(results)
    rows = [[probe["id"], probe["kind"]] + ["yes" if p.answered else ("call" if p.called_again else "-")
                                            for p in (results[name].probes[k] for name in names)]
            for k, probe in enumerate(run.probes)]
    table = text_table(["probe", "kind"] + [str(i + 1) for i in range(len(names))], rows,
                       "<<" + ">" * len(names), widths=[17, 15] + [3] * len(names))
    return table + "\ncolumns: " + "; ".join(f"{i + 1} {n}" for i, n in enumerate(names))


# ------------------------------------------------------------------ reading back what was dropped
def search_transcript(jsonl: str, query: str, limit: int = 5) -> str:
    """The lines of a saved transcript that contain `query` (case-insensitive), as the agent's
    `search_transcript` tool returns them: message number and the matching line, whole."""
    hits = []
    for n, line in enumerate(jsonl.splitlines()):
        message = json.loads(line)
        text = context_text([message])
        for piece in text.splitlines():
            if query.lower() in piece.lower():
                hits.append(f"message {n} ({message['role']}): {piece.strip()}")
    shown = hits[:limit]
    return (f"found {len(hits)} lines for {query!r} in {TRANSCRIPT_PATH}:\n" + "\n".join(shown)
            if hits else f"no line of {TRANSCRIPT_PATH} contains {query!r}")


SEARCH_TRANSCRIPT_TOOL = {"type": "function", "function": {
    "name": "search_transcript",
    "description": "Search the full transcript saved before compaction for a phrase; returns "
                   "the matching lines.",
    "parameters": {"type": "object", "properties": {
        "query": {"type": "string", "description": "The phrase to look for"}},
        "required": ["query"]}}}


def first_words(text: str, n: int = 60) -> str:
    return re.sub(r"\s+", " ", text)[:n]
