"""Chapter 11: the six strategies of the seed textbook's experiment 2-9, and sub-agents, on the
course's replayed run (offline: sizes counted with Chapter 02's template, probes read from the
context; the textbook's own figures come from a research task on a real model).

    none             every tool result kept whole
    per-result       each tool result replaced at once by its own short summary
    merged           everything before the last turns squashed into one summary, rebuilt every
                     request from a capped input (what does not fit the cap is lost)
    context-aware    each result summarised when it arrives, for what the task needs *now*:
                     its call's query (the agent's stated intent and arguments), the stage the
                     agent has reached (gather until it names a root cause, verify until it
                     reports verification, then synthesise) and what the context already holds
    with citations   context-aware, plus the path of the full output (which is saved)
    threshold        nothing until 80% of the window, then every uncompressed result at once,
                     marked [COMPRESSED] so it is never compressed again

The summaries here are rules (the first line, the failure lines, the identifiers), not a model:
the table compares where and when each strategy compresses, not how well a model writes. The
textbook's context-aware prompt gives the model "the search query: {query}" and "the current
context: {context}"; here the query is the call's, the context is read for the stage (the
agent's own milestones) and for lines already shown, and a rule picks the lines.
"""
from __future__ import annotations

import re

from solutions.compaction import check_pairing, split_head, split_turns
from solutions.production_compaction import ResultStore, TokenMeter, archive_turn
from solutions.production_compaction.archive import result_outcome
from course.givens.production_compaction import Run, visible
from course.tables import text_table

STRATEGIES = ("none", "per-result", "merged", "context-aware", "with citations", "threshold")
WINDOW = 32_000
MERGE_CAP = 6_000       # characters of transcript the merged summary may read
KEEP_TURNS = 4
WORD = re.compile(r"[A-Za-z_][\w.-]{3,}")


# Words of an agent's intent that say nothing about what it looks for.
STOPWORDS = {"reading", "searching", "running", "building", "checking", "trying", "handles",
             "calls", "again", "first", "alone", "path", "query", "command", "content", "ledgerline",
             "sub-task", "where", "what", "which", "with", "from", "that", "this", "their"}
# The stage the task is in: the latest milestone the agent reported in its own messages.
MILESTONES = (("synthesise", "Verified:"), ("verify", "Root cause:"))
GATHER_LINES = 6        # lines a result keeps while the agent still collects evidence
VERIFY_LINES = 2        # ... while it checks its fix: only lines about the root cause


def _words(text: str) -> set[str]:
    return {w.lower().rstrip(".") for w in WORD.findall(text)} - STOPWORDS


def _per_result(content: str) -> str:
    return "[summary] " + result_outcome(content)


def task_stage(history: list[dict]) -> tuple[str, set[str]]:
    """(stage, focus words): what the task needs now, read from the agent's own messages.
    'gather' until it names a root cause; then 'verify', focused on the root cause's words,
    until it reports verification; then 'synthesise', where a result's outcome is enough."""
    said = [m["content"] for m in history if m.get("role") == "assistant"
            and isinstance(m.get("content"), str)]
    for stage, marker in MILESTONES:
        found = [text for text in said if marker in text]
        if found:
            return stage, _words(found[-1].split(marker, 1)[1])
    return "gather", set()


def guided_summary(content: str, query: str, stage: str, focus: set[str], shown: set[str]) -> str:
    """One result summarised for the task's current need: its outcome, plus the lines that
    answer its call's `query` (gather) or concern the root cause (verify) and are not already
    in the context (`shown`, updated); the outcome alone once the task is being wrapped up."""
    head = f"[{stage}] {result_outcome(content)}"
    if stage == "synthesise":
        return head
    wanted, limit = (_words(query), GATHER_LINES) if stage == "gather" else (focus, VERIFY_LINES)
    lines = []
    for line in content.splitlines()[1:]:
        line = line.strip()
        if len(lines) < limit and line not in shown and _words(line) & wanted:
            lines.append(line)
    shown.update(lines)
    return "\n".join([head] + lines)


def _queries(history: list[dict]) -> dict[str, str]:
    """Each call id's query: the agent's stated intent and the call's arguments."""
    return {call["id"]: (m.get("content") or "") + " " + call["function"]["arguments"]
            for m in history if m.get("role") == "assistant" for call in m.get("tool_calls") or ()}


def _map_results(messages, fn, memo=None):
    """Each tool result through `fn`, once per call id when a `memo` dict is given."""
    memo = {} if memo is None else memo
    out = []
    for m in messages:
        if m.get("role") != "tool":
            out.append(m)
            continue
        if m["tool_call_id"] not in memo:
            memo[m["tool_call_id"]] = {**m, "content": fn(m)}
        out.append(memo[m["tool_call_id"]])
    return out


def strategy_context(name: str, run: Run, history: list[dict], state: dict, meter) -> list[dict]:
    if name == "none":
        return history
    if name == "per-result":
        return _map_results(history, lambda m: _per_result(m["content"]), state.setdefault("memo", {}))
    if name in ("context-aware", "with citations"):  # each result once, when it arrives
        stage, focus = task_stage(history)
        queries, shown = _queries(history), state.setdefault("shown", set())
        store = state.setdefault("store", ResultStore())

        def summary(m):
            text = guided_summary(m["content"], queries.get(m["tool_call_id"], ""), stage, focus,
                                  shown)
            if name == "with citations":
                text += f"\n[source: {store.save(m['tool_call_id'], m['content'])}]"
            return text
        return _map_results(history, summary, state.setdefault("memo", {}))
    if name == "merged":
        head, rest = split_head(history)
        turns = split_turns(rest)
        if len(turns) <= KEEP_TURNS:
            return history
        records = state.setdefault("records", [])
        records.extend(archive_turn(t) for t in turns[len(records):-KEEP_TURNS])
        old = records
        text, used = [], 0
        for line in old:       # the cap: what does not fit is cut off (the textbook's weakness)
            if used + len(line) > MERGE_CAP:
                break
            text.append(line)
            used += len(line)
        summary = {"role": "user", "content": f"[merged summary of {len(old)} turns, "
                   f"{len(text)} fit the cap]\n" + "\n".join(text)}
        return head + [summary] + [m for t in turns[-KEEP_TURNS:] for m in t]
    if name == "threshold":
        done = state.setdefault("compressed", {})
        context = _map_results(history, lambda m: done.get(m["tool_call_id"], m["content"]))
        if meter(context) > 0.8 * WINDOW:
            for m in history:
                if m.get("role") == "tool" and m["tool_call_id"] not in done:
                    done[m["tool_call_id"]] = "[COMPRESSED] " + result_outcome(m["content"])
            context = _map_results(history, lambda m: done.get(m["tool_call_id"], m["content"]))
        return context
    raise ValueError(f"unknown strategy {name!r}; choose from {STRATEGIES}")


def shared_prefix(a: list[dict], b: list[dict], meter) -> int:
    """Tokens of the leading messages two requests share (what a prefix cache could reuse)."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return meter(b[:n])


def run_strategy(name: str, run: Run) -> dict:
    meter = TokenMeter(run.tools)
    state, history, previous = {}, run.head(), None
    sizes, reused, ok = [], 0, True
    for step in run.steps:
        history = history + step["messages"]
        context = strategy_context(name, run, history, state, meter)
        ok = ok and bool(check_pairing(context))
        sizes.append(meter(context))
        if previous is not None:
            reused += shared_prefix(previous, context, meter)
        previous = context
    probes = [p for p in run.probes if p["how"] == "visible"]
    return {"strategy": name, "input_tokens": sum(sizes), "peak": max(sizes),
            "over_window": sum(s > WINDOW for s in sizes), "prefix_reused": reused / sum(sizes),
            "probes": sum(visible(p, context) for p in probes), "of": len(probes),
            "pairing_ok": ok}


def compaction_strategy_table(rows: list[dict]) -> str:
    """run_strategy's rows, one strategy of experiment 2-9 a line."""
    return text_table(
        ["strategy", "input tokens", "peak", "over window", "prefix reused", "probes"],
        [[r["strategy"], f"{r['input_tokens']:,}", f"{r['peak']:,}", r["over_window"],
          f"{r['prefix_reused']:.0%}", f"{r['probes']:>3}/{r['of']:<3}"] for r in rows],
        "<>>>>>", widths=[16, 12, 8, 11, 13, 7], strip=True)




# ------------------------------------------------------------------ sub-agents
def delegated_steps(run: Run) -> tuple[list[dict], list[dict], dict]:
    """(parent's steps, sub-agent's steps, the delegate tool): the sub-task's steps leave the
    parent's transcript; one `delegate` call returns the distilled answer with pointers."""
    sub = run.subtask
    first, last = sub["at"], sub["at"] + sub["steps"]
    child = run.steps[first:last]
    call = {"id": "call_delegate_1", "type": "function", "function": {
        "name": "delegate", "arguments": '{"task": "' + sub["task"] + '"}'}}
    result = (sub["answer"] + f"\n[sub-agent: {len(child)} steps; its transcript is at "
              f".agent/subagents/sub-001.jsonl]")
    step = {"step": first + 1, "messages": [
        {"role": "assistant", "content": "Delegating the search to a read-only sub-agent.",
         "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_delegate_1", "content": result}]}
    parent = run.steps[:first] + [step] + run.steps[last:]
    tool = {"type": "function", "function": {
        "name": "delegate", "description": "Give a sub-task to a sub-agent with its own context; "
        "returns its distilled answer.", "parameters": {"type": "object", "properties": {
            "task": {"type": "string", "description": "The sub-task"}}, "required": ["task"]}}}
    return parent, child, tool


def subagent_messages(run: Run, child_steps: list[dict], upto: int) -> list[dict]:
    """The sub-agent's request before its step `upto`+1: the parent's system prompt and tools
    (the same prefix, so it is cached), the sub-task, and its own steps so far."""
    task = {"role": "user", "content": run.subtask["task"]}
    return [run.head()[0], task] + [m for s in child_steps[:upto] for m in s["messages"]]
