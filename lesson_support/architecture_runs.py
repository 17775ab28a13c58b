"""Chapter 15's lesson support, on chapter 11's run: three searches inline, by fresh sub-agents and
by forks; and the assembled context manager against each of its parts and a sliding window.

Sub-agents. The parent is chapter 11's agent at step 40, where chapter 11 delegated one search
(its context: 39,000 tokens). It now needs three independent searches (CHILD_TASKS):

    inline                 the parent asks them itself, one after another: its context grows by
                           every result
    fresh                  three children at once (solutions.architecture.run_children), each
                           [the parent's system prompt and tools, its task]; digests come back
    forked, own tools      three children at once, each the parent's whole context and its task,
                           with a read-only tool list (write_file removed): the usual fork
    forked, same prefix    the same, with the parent's tools: byte-identical to the parent's
                           prefix, so its cache is hit

The parent's last request (its context at step 40) is sent first, on a fresh teaching model, to
warm the cache as a running agent's would be; then the mode's requests, then the parent's next
request (after the searches, or with the three digests as results of three `delegate` calls).
Wall time is the teaching model's simulated serving time (course/llm/timing.py): inline, the sum
of every request; delegated, the slowest child (they run in parallel) plus the parent's request.
Fresh children are sent in parallel (run_children): each one's cached tokens depend only on the
warmed prefix and its own requests. Forks are sent one after another: sent at once, a fork's
first request could not hit what a sibling had not yet cached, and the figures would depend on
which arrived first.

The context manager. Chapter 11's replay (every request counted offline, every 20th sent) of:
its five layers; the noisy search delegated to a sub-agent (chapter 11's delegated_steps, the
child's requests sent too); each alone; and a sliding window keeping the last messages.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from course.givens.architecture import CHILD_TASKS, TRANSCRIPTS_DIR, search_world
from course.givens.production_compaction import Run, visible
from course.usage import read_usage
from lesson_support.production_compaction import (CONFIGS, STRIDE, Measurement, replay_config,
                                                  score_probes)
from lesson_support.production_compaction_strategies import delegated_steps, subagent_messages
from solutions.architecture.children import child_budgets, run_child, run_children
from solutions.compaction import check_pairing
from solutions.production_compaction import LAYERS, TokenMeter

DELEGATE_AT = 40          # chapter 11 delegates its search at this step
MODES = ("inline", "fresh", "forked, own tools", "forked, same prefix")
DIGEST_LIMIT = 200


def parent_context(run: Run) -> list[dict]:
    return run.history(DELEGATE_AT)


def _seconds(completion):
    return ((getattr(completion, "model_extra", None) or {}).get("teaching_timing") or {}).get("total_s")


@dataclass
class ModeResult:
    mode: str
    parent: list = field(default_factory=list)     # (prompt, cached, seconds) of the parent's requests
    children: list = field(default_factory=list)   # run_child records
    knows: int = 0                                  # parent probes visible in a child's first request

    @property
    def parent_tokens(self) -> int:
        return sum(p for p, _, _ in self.parent)

    @property
    def total_tokens(self) -> int:
        return self.parent_tokens + sum(c["prompt_tokens"] for c in self.children)

    @property
    def hit_rate(self) -> float:
        cached = sum(c for _, c, _ in self.parent) + sum(c["cached_tokens"] for c in self.children)
        return cached / self.total_tokens

    @property
    def wall_s(self) -> float:
        own = sum(s for _, _, s in self.parent)
        return round(own + max((c["seconds"] for c in self.children), default=0.0), 3)


def _send(client, model, messages, tools, result: ModeResult):
    reply = client.chat.completions.create(model=model, messages=messages, tools=tools)
    usage = read_usage(reply.usage)
    result.parent.append((usage.prompt, usage.cached, _seconds(reply)))
    return reply


def _delegated(run: Run, children: list[dict]) -> list[dict]:
    """The parent's context after its three delegate calls and their digests."""
    calls = [{"id": f"call_delegate_{k}", "type": "function", "function": {
        "name": "delegate", "arguments": json.dumps({"task": c["task"]})}} for k, c in enumerate(children, 1)]
    return parent_context(run) + [{"role": "assistant", "content": "Delegating three searches.", "tool_calls": calls}] + [
        {"role": "tool", "tool_call_id": call["id"], "content": c["digest"]} for call, c in zip(calls, children)]


def run_mode(run: Run, mode: str, client, model, budget=4, tasks=CHILD_TASKS) -> ModeResult:
    """One mode of the three searches on `client` (give each mode a fresh teaching model)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose from {MODES}")
    parent = parent_context(run)
    client.chat.completions.create(model=model, messages=parent, tools=run.tools)  # warm, as a running agent
    result = ModeResult(mode)
    probes = [p for p in run.probes if p["how"] == "visible" and visible(p, parent)]
    (b,) = child_budgets(budget, 1)
    if mode == "inline":
        context, result.knows = parent, len(probes)
        for task in tasks:
            context = context + [{"role": "user", "content": task}]
            while True:
                reply = _send(client, model, context, run.tools, result)
                message = reply.choices[0].message
                calls = message.tool_calls or []
                context = context + [{"role": "assistant", "content": message.content, **({"tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
                    for c in calls]} if calls else {})}]
                if not calls:
                    break
                context += [{"role": "tool", "tool_call_id": c.id,
                             "content": search_world(c.function.name, json.loads(c.function.arguments))} for c in calls]
        _send(client, model, context + [{"role": "user", "content": "Go on with the ticket."}], run.tools, result)
        return result
    if mode == "fresh":
        result.children = run_children(client, list(tasks), budget, system=run.system, tools=run.tools,
                                       model=model, limit=DIGEST_LIMIT)
        head = [parent[0]]
    else:  # one after another, so that the figures are the same every run (see the docstring)
        tools = run.tools if mode == "forked, same prefix" else \
            [t for t in run.tools if t["function"]["name"] != "write_file"]
        result.children = [run_child(client, model, parent, tools, search_world, task, b, DIGEST_LIMIT,
                                     f"{TRANSCRIPTS_DIR}/child-{k}.jsonl") for k, task in enumerate(tasks, 1)]
        head = parent
    result.knows = sum(visible(p, head) for p in probes)
    _send(client, model, _delegated(run, result.children) + [{"role": "user", "content": "Go on with the ticket."}],
          run.tools, result)
    return result


def mode_table(results: dict, probes: int) -> str:
    rows = [f"{'mode':<20} {'parent tokens':>13} {'total tokens':>12} {'hit rate':>8} {'wall s':>7} "
            f"{'child knows':>11}"]
    for name, r in results.items():
        knows = f"{r.knows}/{probes}"
        rows.append(f"{name:<20} {r.parent_tokens:>13,} {r.total_tokens:>12,} {r.hit_rate:>8.0%} "
                    f"{r.wall_s:>7.2f} {knows:>11}")
    return "\n".join(rows)


# ------------------------------------------------------------------ the context manager
WINDOW_MESSAGES = 60      # the sliding window keeps the head and the last this many messages
MANAGER_CONFIGS = ("no management", "sliding window", "1 budget alone", "3 micro alone",
                   "5 compaction alone", "sub-agent alone", "assembled")


def sliding_window(history: list[dict], keep: int = WINDOW_MESSAGES) -> list[dict]:
    """The system prompt and the task, then the last `keep` messages, started at an assistant
    message so that no tool result loses its call (chapter 04's pairing holds)."""
    head, rest = history[:2], history[2:]
    if len(rest) <= keep:
        return history
    tail = rest[-keep:]
    while tail and tail[0]["role"] != "assistant":
        tail = tail[1:]
    return head + tail


def replay_window(run: Run, client, model, keep: int = WINDOW_MESSAGES, stride: int = STRIDE) -> Measurement:
    """Chapter 11's replay with a sliding window in place of the compactor."""
    meter = TokenMeter(run.tools)
    m = Measurement("sliding window", ())
    history = run.head()
    for j, step in enumerate(run.steps, 1):
        history = history + step["messages"]
        context = sliding_window(history, keep)
        m.pairing_ok = m.pairing_ok and bool(check_pairing(context))
        m.sizes.append(meter(context))
        if j % stride == 0 or j == len(run.steps):
            usage = client.chat.completions.create(model=model, messages=context, tools=run.tools).usage
            read = read_usage(usage)
            m.sent.append((j, read.prompt, read.cached))
            m.usages.append(usage)
    m.final = context
    m.probes = score_probes(run, context, client, model)
    return m


def _child_usages(run: Run, child_steps: list, tools: list, client, model) -> list:
    """The delegated sub-agent's requests (chapter 11's), sent after the parent's request that
    warms the shared prefix; their usages."""
    client.chat.completions.create(model=model, messages=run.history(DELEGATE_AT), tools=tools)
    return [client.chat.completions.create(model=model, messages=subagent_messages(run, child_steps, k),
                                           tools=tools).usage for k in range(len(child_steps))]


def replay_manager(run: Run, name: str, client, model) -> Measurement:
    """One configuration of MANAGER_CONFIGS on chapter 11's run (give each a fresh teaching
    model). With the sub-agent, the tools carry `delegate` and the child's requests are added to
    the usages (its tokens, cache and cost count; its sizes do not enter the parent's saw-tooth)."""
    if name == "sliding window":
        return replay_window(run, client, model)
    layers = {"no management": (), "1 budget alone": ("budget",), "3 micro alone": ("micro",),
              "5 compaction alone": CONFIGS["5 only (teaching-model summary)"],
              "sub-agent alone": (), "assembled": LAYERS}.get(name)
    if layers is None:
        raise ValueError(f"unknown configuration {name!r}; choose from {MANAGER_CONFIGS}")
    if name in ("sub-agent alone", "assembled"):
        parent_steps, child_steps, tool = delegated_steps(run)
        with_tool = Run(run.name, run.system, run.task, run.tools + [tool], run.steps, run.probes, run.subtask)
        m = replay_config(with_tool, name, layers, client, model, history_steps=parent_steps)
        m.usages = m.usages + _child_usages(with_tool, child_steps, with_tool.tools, client, model)
        m.config = name
        return m
    return replay_config(run, name, layers, client, model)


def manager_table(results: dict) -> str:
    rows = [f"{'configuration':<20} {'input tokens':>12} {'peak':>7} {'sent':>9} {'hit rate':>8} "
            f"{'cost $':>8} {'probes':>7} {'again':>5}"]
    for name, m in results.items():
        sent = sum(read_usage(u).prompt for u in m.usages)
        rows.append(f"{name:<20} {m.input_tokens:>12,} {max(m.sizes):>7,} {sent:>9,} {m.hit_rate:>8.0%} "
                    f"{m.cost:>8.4f} {m.answered:>3}/{len(m.probes):<3} {m.called_again:>5}")
    return "\n".join(rows)
