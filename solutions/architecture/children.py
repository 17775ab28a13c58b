"""Fresh sub-agents in parallel (Chapter 15): each child gets its own small context (the
parent's system prompt and tools, then its task), runs within its budget, and hands back a
digest; the parent hears how each ended, failures included.

The prefix is the parent's on purpose: a child's first request reuses the parent's cached
system prompt and tools only if they are byte-identical (the second textbook section, 21.6.5;
chapter 05's prefix rule). A child's tools are the parent's too: to make a child read-only,
refuse the writes in `execute` (mask, don't remove: Manus' principle) rather than offer another
tool list, which would start its cache cold.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from course.givens.architecture import BUDGET_KEYS, TRANSCRIPTS_DIR, search_world
from course.givens.production_compaction import load_run
from course.usage import read_usage
from solutions.architecture.report import digest


def child_budgets(budget, n: int) -> list[dict]:
    """`budget` as one normalised dict per child (see run_children); ValueError when malformed."""
    budgets = budget if isinstance(budget, list) else [budget] * n
    if len(budgets) != n:
        raise ValueError(f"{n} tasks but {len(budgets)} budgets: give one budget, or one per task")
    out = []
    for b in budgets:
        b = {"requests": b} if isinstance(b, int) and not isinstance(b, bool) else b
        if not isinstance(b, dict) or set(b) - set(BUDGET_KEYS) or "requests" not in b:
            raise ValueError(f"a budget is a positive int of requests or a dict with 'requests' "
                             f"(and optionally 'prompt_tokens'); got {b!r}")
        for key, value in b.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"budget {key} must be a positive integer, got {value!r}")
        out.append(b)
    return out


def _timing(completion):
    extra = getattr(completion, "model_extra", None) or {}
    return (extra.get("teaching_timing") or {}).get("total_s")


def run_child(client, model, head, tools, execute, task, budget, limit, where) -> dict:
    """One child whose context starts with the messages `head` (a fresh child's: the system
    prompt alone; a fork's: the parent's whole context), then its task: its loop within
    `budget` (a dict, see run_children), then its digest."""
    messages = list(head) + [{"role": "user", "content": task}]
    record = {"task": task, "status": None, "reason": None, "requests": 0, "prompt_tokens": 0,
              "cached_tokens": 0, "completion_tokens": 0, "seconds": 0.0}
    failing = False
    while record["status"] is None:
        if record["requests"] >= budget["requests"] or \
                record["prompt_tokens"] >= budget.get("prompt_tokens", float("inf")):
            spent = (f"{record['requests']} of {budget['requests']} requests, "
                     f"{record['prompt_tokens']:,} prompt tokens")
            record["status"] = "failed" if failing else "budget"
            record["reason"] = ("its tool kept failing; budget spent: " if failing
                                else "out of budget: ") + spent
            break
        try:
            reply = client.chat.completions.create(model=model, messages=messages, tools=tools)
        except Exception as error:  # the parent hears it; the other children go on
            record["status"], record["reason"] = "failed", f"{type(error).__name__}: {error}"[:200]
            break
        record["requests"] += 1
        usage = read_usage(reply.usage)
        record["prompt_tokens"] += usage.prompt
        record["completion_tokens"] += usage.completion
        record["cached_tokens"] = None if record["cached_tokens"] is None or usage.cached is None \
            else record["cached_tokens"] + usage.cached
        seconds = _timing(reply)
        record["seconds"] = None if record["seconds"] is None or seconds is None \
            else round(record["seconds"] + seconds, 3)
        message = reply.choices[0].message
        calls = message.tool_calls or []
        messages.append({"role": "assistant", "content": message.content,
                         **({"tool_calls": [{"id": c.id, "type": "function", "function": {
                             "name": c.function.name, "arguments": c.function.arguments}}
                             for c in calls]} if calls else {})})
        if not calls:
            record["status"] = "done"
            break
        failing = True
        for call in calls:
            try:
                arguments = json.loads(call.function.arguments or "{}")
                result = execute(call.function.name, arguments if isinstance(arguments, dict) else {})
                failing = False
            except Exception as error:
                result = json.dumps({"error": f"{type(error).__name__}: {error}"})
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(result)})
    record["digest"] = digest(messages, limit, where=where, status=record["status"],
                              reason=record["reason"])
    record["transcript"] = messages
    return record


def run_children(client, tasks, budget, system=None, tools=None, execute=None, model=None,
                 limit=200):
    """Run one fresh child per task, all at once (threads), and return one record per task, in
    the tasks' order: {"task", "status" ("done", "budget" or "failed"), "reason" (None when
    done), "digest" (digest() of its transcript in `limit` tokens, saved as
    TRANSCRIPTS_DIR/child-K.jsonl), "requests", "prompt_tokens", "cached_tokens",
    "completion_tokens" (summed over its requests; cached None when not reported), "seconds"
    (the teaching model's simulated serving time, None elsewhere), "transcript"}.

    A child's context is [system, its task]: `system` and `tools` default to chapter 11's run's,
    so they are the parent's prefix. `budget` (one for every child, or a list, one per task) is
    an int of requests or a dict with "requests" and optionally "prompt_tokens": a child stops
    before a request once it has sent that many or used that many prompt tokens. A tool that
    raises becomes an error result the child sees; a child whose last round failed and that
    runs out is "failed", as is one whose request raised. Nothing a child does stops another."""
    import course.llm

    if not isinstance(tasks, list) or not all(isinstance(t, str) and t.strip() for t in tasks):
        raise ValueError("tasks must be a list of non-empty strings")
    budgets = child_budgets(budget, len(tasks))
    run = load_run() if system is None or tools is None else None
    system = run.system if system is None else system
    tools = run.tools if tools is None else tools
    execute = search_world if execute is None else execute
    model = model or course.llm.MODEL_NAME
    if not tasks:
        return []
    with ThreadPoolExecutor(max_workers=len(tasks)) as pool:
        head = [{"role": "system", "content": system}]
        futures = [pool.submit(run_child, client, model, head, tools, execute, task, b, limit,
                               f"{TRANSCRIPTS_DIR}/child-{k}.jsonl")
                   for k, (task, b) in enumerate(zip(tasks, budgets), 1)]
        return [f.result() for f in futures]
