"""Chapter 14's lesson support: the same conversation sent whole and chained, and chapter 11's
replayed run through three strategies: the chapter-11 layers (own), the server's compaction
(Responses API), and context editing (Anthropic-style, on Chat Completions).

Every strategy sees all 212 requests of the run (sizes counted offline with chapter 11's
TokenMeter, which is the teaching model's count) and sends every `STRIDE`-th and the last to
the model, as chapter 11 does; cache hit rates are therefore those of requests `STRIDE` steps
apart. The answers are in `solutions.provider_context`; the run and `visible` are chapter 11's
givens.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from course.givens.production_compaction import Run, context_text, visible
from course.llm.responses import chat_messages, unseal
from course.tables import text_table
from course.usage import read_usage
from lesson_support.production_compaction import (STRIDE, CountingSummarizer, Measurement,
                                                  ProbeResult, score_probes)
from solutions.production_compaction import LAYERS, LayeredCompactor, ResultStore, Settings, TokenMeter
from solutions.provider_context import (CHAT_TOOLS, INSTRUCTIONS, cache_loss, clear_tool_uses,
                                        execute_tool)

STRATEGY_NAMES = ("own layers (chapter 11)", "server compaction", "context editing")
EDIT_TRIGGER = 24_000   # context editing: clear above this many input tokens (75% of the window)
EDIT_KEEP = 6           # ... all but the last 6 tool uses (chapter 11's micro layer keeps 6)

# Which provider offers what (REFERENCE.md, providers' documentation as of 2026): the teaching
# model simulates the first two columns' OpenAI side and Anthropic's context editing.
FEATURES = (
    ("server state", "previous_response_id, store", "— (the client resends)", "—"),
    ("server compaction", "compact_threshold, /responses/compact (sealed item)",
     "compact_20260112 (a compaction block)", "—"),
    ("clearing old tool results", "—", "clear_tool_uses_20250919", "—"),
    ("memory the client executes", "—", "memory_20250818 (/memories)", "—"),
    ("cache routing / retention", "prompt_cache_key, prompt_cache_retention", "cache_control breakpoints",
     "automatic (DeepSeek: on disk)"),
    ("usage fields", "input_tokens_details.cached_tokens", "cache_read_input_tokens, cache_creation_input_tokens",
     "DeepSeek prompt_cache_hit_tokens; Ollama none"),
)


def feature_table() -> str:
    return text_table(["feature", "OpenAI (Responses)", "Anthropic (Messages)", "others"], FEATURES, "<<<<",
                      widths=[28, 52, 52, 0])


# ------------------------------------------------------------------ one conversation, two ways
def whole_conversation(client, model, turns, tools=CHAT_TOOLS, execute=execute_tool,
                       instructions=INSTRUCTIONS, max_calls=5) -> list[dict]:
    """The conversation on Chat Completions, the whole history sent every request; rows shaped
    like chain_turns' (input, text, requests, input_tokens, cached_tokens, output_tokens)."""
    history, rows = [{"role": "system", "content": instructions}], []
    for turn in turns:
        history.append({"role": "user", "content": turn})
        row = {"input": turn, "text": None, "requests": 0, "input_tokens": 0, "cached_tokens": 0,
               "output_tokens": 0}
        while row["requests"] < max_calls:
            reply = client.chat.completions.create(model=model, messages=history, tools=tools)
            usage = read_usage(reply.usage)
            row["requests"] += 1
            row["input_tokens"] += usage.prompt or 0
            row["cached_tokens"] += usage.cached or 0
            row["output_tokens"] += usage.completion or 0
            message = reply.choices[0].message
            history.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                row["text"] = message.content
                break
            for call in message.tool_calls:
                try:
                    result = execute(call.function.name, json.loads(call.function.arguments or "{}"))
                except Exception as error:
                    result = json.dumps({"error": str(error)})
                history.append({"role": "tool", "tool_call_id": call.id, "content": result})
        rows.append(row)
    return rows


def turn_table(whole: list[dict], chained: list[dict]) -> str:
    rows = [[k, f"{a['input_tokens']:,}", f"{a['cached_tokens']:,}", f"{b['input_tokens']:,}",
             f"{b['cached_tokens']:,}", f"the new user message and {b['requests'] - 1} function output(s)"]
            for k, (a, b) in enumerate(zip(whole, chained), 1)]
    rows.append(["sum"] + [f"{sum(r[key] for r in side):,}" for side in (whole, chained)
                           for key in ("input_tokens", "cached_tokens")])
    return text_table(["turn", "whole: input", "cached", "chained: input", "cached",
                       "sent by the client (chained)"], rows, ">>>>><", widths=[4, 12, 7, 14, 7, 0],
                      sep=[" "] * 4 + ["  "])


def speaks_responses(client, model) -> tuple[bool, str]:
    """Does this endpoint serve the Responses API? (True, "") or (False, why)."""
    try:
        reply = client.responses.create(model=model, input="Say OK.", max_output_tokens=16, store=False)
    except Exception as error:  # a 404, a 400 or a refused connection: it does not
        return False, f"{type(error).__name__}: {str(error)[:160]}"
    if getattr(reply, "object", None) != "response" or read_usage(reply.usage).prompt is None:
        return False, "its answer is not a Responses API response (no input_tokens in its usage)"
    return True, ""


# ------------------------------------------------------------------ items and views
def items_of(messages: list[dict]) -> list[dict]:
    """Chat Completions messages (no system message) as Responses input items."""
    items = []
    for m in messages:
        if m["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
        elif m["role"] == "assistant":
            if m.get("content"):
                items.append({"role": "assistant", "content": m["content"]})
            for call in m.get("tool_calls") or ():
                items.append({"type": "function_call", "call_id": call["id"], "name": call["function"]["name"],
                              "arguments": call["function"]["arguments"]})
        else:
            items.append({"role": m["role"], "content": m["content"]})
    return items


def responses_tools(tools: list[dict]) -> list[dict]:
    return [{"type": "function", **t["function"]} for t in tools]


def as_input(item) -> dict:
    """An output item of /responses/compact as an input item."""
    if item.type == "compaction":
        return {"type": "compaction", "encrypted_content": item.encrypted_content}
    if item.type == "function_call":
        return {"type": "function_call", "call_id": item.call_id, "name": item.name, "arguments": item.arguments}
    if item.type == "function_call_output":
        return {"type": "function_call_output", "call_id": item.call_id, "output": item.output}
    text = "".join(part.text for part in item.content)
    return {"role": item.role, "content": text}


def client_view(system: str, window: list[dict]) -> list[dict]:
    """What the client can read of a window: a compaction is only its sealed text."""
    return chat_messages(system, [{**i, "summary": i["encrypted_content"]} if i.get("type") == "compaction" else
                                  _normal(i) for i in window])


def model_view(system: str, window: list[dict]) -> list[dict]:
    """What the model reads: the summary a compaction stands for. Only the simulation can show it
    (unseal with the teaching model's own key); a real provider never gives it to you."""
    return chat_messages(system, [{**i, "summary": unseal(i["encrypted_content"], "compaction")["summary"]}
                                  if i.get("type") == "compaction" else _normal(i) for i in window])


def _normal(item: dict) -> dict:
    return item if "type" in item else {"type": "message", **item}


def usage_record(usage) -> dict:
    """A Responses API usage as the course's flat record (read_usage, price_usages)."""
    read = read_usage(usage)
    return {"prompt_tokens": read.prompt, "completion_tokens": read.completion,
            "cached_tokens": read.cached, "cache_write_tokens": read.cache_write or 0}


# ------------------------------------------------------------------ the run, three strategies
@dataclass
class Replay(Measurement):
    """A chapter-11 Measurement plus what chapter 14 follows request by request."""
    visible: list = field(default_factory=list)       # probes visible to the model, per request
    compactions: list = field(default_factory=list)   # (request, tokens before, after)
    cleared: list = field(default_factory=list)       # tokens an edit freed, per request
    lost: list = field(default_factory=list)          # cache_loss against the request before
    client_visible: int | None = None                 # probes the client can check at the end


def _visible_count(run: Run, messages: list[dict]) -> int:
    text = context_text(messages)
    return sum(all(e in text for e in p["expect"]) for p in run.probes if p["how"] == "visible")


def replay_strategy(run: Run, strategy: str, client, model, stride: int = STRIDE,
                    settings: Settings = Settings(), trigger: int = EDIT_TRIGGER, keep: int = EDIT_KEEP,
                    clear_at_least: int = 0, send: bool = True) -> Replay:
    """The run through one of STRATEGY_NAMES on `client` (every `stride`-th request sent)."""
    if strategy not in STRATEGY_NAMES:
        raise ValueError(f"unknown strategy {strategy!r}; choose from {STRATEGY_NAMES}")
    sent_at = {j for j in range(1, len(run.steps) + 1) if j % stride == 0 or j == len(run.steps)}
    m = Replay(strategy, ())
    meter = TokenMeter(run.tools)
    if strategy == STRATEGY_NAMES[0]:
        return _own(run, m, meter, client, model, sent_at, settings, send)
    if strategy == STRATEGY_NAMES[1]:
        return _server(run, m, meter, client, model, sent_at, settings, send)
    return _editing(run, m, meter, client, model, sent_at, trigger, keep, clear_at_least, send)


def _chat_send(m: Replay, j: int, usage) -> None:
    read = read_usage(usage)
    m.sent.append((j, read.prompt, read.cached))
    m.usages.append(usage)


def _own(run, m, meter, client, model, sent_at, settings, send):
    summarize = CountingSummarizer(client, model, run.tools)
    compactor = LayeredCompactor(LAYERS, settings, summarize=summarize, tools=run.tools, store=ResultStore())
    m.layers = LAYERS
    history, previous = run.head(), None
    for j, step in enumerate(run.steps, 1):
        history = history + step["messages"]
        context = compactor(history)
        m.sizes.append(meter(context))
        m.visible.append(_visible_count(run, context))
        m.lost.append(cache_loss(previous, context) if previous else 0)
        m.cleared.append(0)
        previous = context
        if send and j in sent_at:
            _chat_send(m, j, client.chat.completions.create(model=model, messages=context, tools=run.tools).usage)
    m.usages.extend(summarize.usages)
    m.events, m.final, m.compactor = compactor.events, context, compactor
    m.compactions = [(e.request, e.tokens_before, e.tokens_after) for e in compactor.events if e.layer == "full"]
    m.over_window = sum(s > settings.window for s in m.sizes)
    if send:
        m.probes = score_probes(run, context, client, model)
    m.client_visible = _visible_count(run, context)
    return m


def _server(run, m, meter, client, model, sent_at, settings, send):
    """Stateless (store=false): the client keeps the window, asks the server to compact it when
    input_tokens passes the threshold (/responses/compact) and sends the window it gets back."""
    threshold = int(settings.full_at * settings.window)
    tools = responses_tools(run.tools)
    window = [{"role": "user", "content": run.task}]
    previous = None
    for j, step in enumerate(run.steps, 1):
        window = window + items_of(step["messages"])
        view = model_view(run.system, window)
        size = meter(view)
        if size > threshold:
            compacted = client.responses.compact(model=model, instructions=run.system, input=window)
            m.usages.append(usage_record(compacted.usage))
            window = [as_input(item) for item in compacted.output]
            view = model_view(run.system, window)
            m.compactions.append((j, size, meter(view)))
            size = meter(view)
        m.sizes.append(size)
        m.visible.append(_visible_count(run, view))
        m.lost.append(cache_loss(previous, view) if previous else 0)
        m.cleared.append(0)
        previous = view
        if send and j in sent_at:
            reply = client.responses.create(model=model, instructions=run.system, input=window, tools=tools,
                                            store=False)
            record = usage_record(reply.usage)
            m.sent.append((j, record["prompt_tokens"], record["cached_tokens"]))
            m.usages.append(record)
    m.final = view
    m.window = window
    m.over_window = sum(s > settings.window for s in m.sizes)
    m.client_visible = _visible_count(run, client_view(run.system, window))
    if send:
        m.probes = _server_probes(run, window, view, client, model, tools)
    return m


def _server_probes(run, window, view, client, model, tools) -> list[ProbeResult]:
    out = []
    for probe in run.probes:
        if probe["how"] != "ask":
            out.append(ProbeResult(probe["id"], probe["kind"], visible(probe, view)))
            continue
        reply = client.responses.create(model=model, instructions=run.system, tools=tools, store=False,
                                        input=window + [{"role": "user", "content": probe["question"]}])
        calls = [o for o in reply.output if o.type == "function_call"]
        if calls:
            out.append(ProbeResult(probe["id"], probe["kind"], False, True, f"calls {calls[0].name} {calls[0].arguments}"))
        else:
            text = reply.output_text or ""
            out.append(ProbeResult(probe["id"], probe["kind"], all(e in text for e in probe["expect"]), False, text))
    return out


def edit_body(trigger: int, keep: int, clear_at_least: int = 0) -> dict:
    """The context_management field of a Chat Completions request (extra_body)."""
    return {"edits": [{"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": trigger},
                       "keep": {"type": "tool_uses", "value": keep},
                       "clear_at_least": {"type": "input_tokens", "value": clear_at_least}}]}


def _editing(run, m, meter, client, model, sent_at, trigger, keep, clear_at_least, send):
    """The client sends the whole history every request; the server clears old tool results
    (clear_tool_uses, computed here by the client-side equivalent for the requests not sent)."""
    history, previous = run.head(), None
    m.mismatches = 0
    for j, step in enumerate(run.steps, 1):
        history = history + step["messages"]
        edited = clear_tool_uses(history, trigger, keep, clear_at_least, tools=run.tools)
        context = edited["messages"]
        m.sizes.append(meter(context))
        m.cleared.append(edited["cleared_input_tokens"])
        m.visible.append(_visible_count(run, context))
        m.lost.append(cache_loss(previous, context) if previous else 0)
        previous = context
        if send and j in sent_at:
            reply = client.chat.completions.create(model=model, messages=history, tools=run.tools,
                                                   extra_body={"context_management": edit_body(trigger, keep, clear_at_least)})
            _chat_send(m, j, reply.usage)
            m.mismatches += read_usage(reply.usage).prompt != m.sizes[-1]  # the server's edit is ours
    m.final = context
    m.over_window = sum(s > Settings().window for s in m.sizes)
    m.client_visible = _visible_count(run, context)
    if send:
        m.probes = score_probes(run, context, client, model)
    return m


def provider_strategy_table(results: dict, run: Run) -> str:
    """One row per strategy: chapter 11's columns, and the probes the client itself can check."""
    seen = sum(p["how"] == "visible" for p in run.probes)
    rows = [[name, f"{m.input_tokens:,}", f"{max(m.sizes):,}", f"{m.sent_prompt:,}", f"{m.sent_cached or 0:,}",
             "n/r" if m.hit_rate is None else f"{m.hit_rate:.0%}", f"{m.cost:.4f}",
             f"{m.answered:>3}/{len(m.probes):<3}", m.called_again, f"{m.client_visible:>9}/{seen:<6}"]
            for name, m in results.items()]
    return text_table(["strategy", "input tokens", "peak", "sent", "cached", "hit rate", "cost $", "probes",
                       "again", "client can check"], rows, "<>>>>>>>>>",
                      widths=[max(len(n) for n in results), 12, 7, 9, 9, 8, 8, 7, 5, 16])




def clearing_sweep(run: Run, values, trigger: int = EDIT_TRIGGER, keep: int = EDIT_KEEP) -> list[dict]:
    """For each clear_at_least value, context editing over the whole run, counted offline: the
    first request it cleared at, the tokens that freed and the cache it lost there; over the
    run, the input tokens, the requests whose cached prefix an edit broke and the cache lost."""
    rows = []
    for value in values:
        m = replay_strategy(run, STRATEGY_NAMES[2], None, None, trigger=trigger, keep=keep,
                            clear_at_least=value, send=False)
        first = next((j for j, c in enumerate(m.cleared) if c), None)
        rows.append({"clear_at_least": value, "first": None if first is None else first + 1,
                     "freed_first": m.cleared[first] if first is not None else 0,
                     "lost_first": m.lost[first] if first is not None else 0,
                     "input_tokens": m.input_tokens, "peak": max(m.sizes),
                     "breaks": sum(x > 0 for x in m.lost), "lost": sum(m.lost),
                     "freed_last": m.cleared[-1]})
    return rows


def sweep_table(rows: list[dict]) -> str:
    return text_table(
        ["clear_at_least", "first edit", "freed there", "cache lost there", "input tokens", "peak", "breaks",
         "cache lost"],
        [[f"{r['clear_at_least']:,}", r["first"] or "-", f"{r['freed_first']:,}", f"{r['lost_first']:,}",
          f"{r['input_tokens']:,}", f"{r['peak']:,}", r["breaks"], f"{r['lost']:,}"] for r in rows],
        ">" * 8, widths=[14, 10, 11, 16, 12, 7, 6, 10])


def layers_cache_breaks(run: Run, layers=("budget", "noise", "micro"), settings: Settings = Settings()) -> dict:
    """Chapter 11's compactor with `layers` (no model needed) over the whole run, counted offline
    like clearing_sweep: its micro-compactions, the requests whose cached prefix changed, the
    cache lost, the input tokens and the peak."""
    if "full" in layers:
        raise ValueError("layer 5 needs a model; replay it with replay_strategy")
    compactor = LayeredCompactor(layers, settings, tools=run.tools, store=ResultStore())
    history, previous, sizes, lost = run.head(), None, [], []
    for step in run.steps:
        history = history + step["messages"]
        context = compactor(history)
        sizes.append(compactor.meter(context))
        lost.append(cache_loss(previous, context) if previous else 0)
        previous = context
    return {"micro": sum(e.layer == "micro" for e in compactor.events), "breaks": sum(x > 0 for x in lost),
            "lost": sum(lost), "input_tokens": sum(sizes), "peak": max(sizes),
            "dropped": compactor.dropped_turns}
