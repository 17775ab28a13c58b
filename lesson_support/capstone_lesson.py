"""Lesson 19's helpers: a capstone run taken apart request by request, and the recorded baselines.

    recorded_run(manager, task, trial, client)   the capstone's own `run`, watched: every request
                      the manager built, what the model answered (or refused), the calls' results,
                      the database as the calls left it and the score so far (`steps`)
    composition(messages)   what a request is made of, in tokens: system, user, desk, tool results
                      (fenced, capped and cleared ones counted apart), notes written in
    recorded_baselines()    data/capstone/baselines.json, written by benchmarks/record_capstone.py

Nothing here changes how a run is judged: `recorded_run` calls course.givens.capstone.run with a
manager and a client that only look, and replays the calls on a copy of the task's database to
show its state after each request; the replay's final verdict is checked against the run's.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

from course.givens.capstone import TOOLS, cost, execute_task, judge_task, leaked, run, tools_of
from course.paths import DATA_DIR
from solutions.capstone.layers import request_tokens
from solutions.tokens import count_request_tokens

RECORDED = DATA_DIR / "capstone" / "baselines.json"
PARTS = ("tools", "system", "user", "desk", "results", "fenced", "cleared")
FENCE = '<external_content source="tool">'
NOTE = "(as noted earlier in the conversation)"   # what layers.remember writes
CAPPED = "more tokens not shown]"                  # what layers.cap_results writes


def message_tokens(message: dict) -> int:
    """What one message adds to a request (the teaching model's count, chapter 02)."""
    return request_tokens([message]) - request_tokens([])


def composition(messages: list[dict], tools: list[dict] = TOOLS) -> dict:
    """Tokens of a request by part (PARTS: the definitions of `tools` (the task's: tools_of), then its messages; a result's tokens count as cleared, else
    fenced, else plain "results"), "total", and how many results were fenced, cleared and capped (one
    result may be all three)
    and how many notes were written into user turns ("n_fenced", "n_cleared", "n_capped", "notes")."""
    out = {part: 0 for part in PARTS} | {"n_fenced": 0, "n_capped": 0, "n_cleared": 0, "notes": 0}
    out["tools"] = count_request_tokens([], tools) - count_request_tokens([])   # sent with every request
    for m in messages:
        tokens, text = message_tokens(m), str(m.get("content") or "")
        if m["role"] == "system":
            out["system"] += tokens
        elif m["role"] == "user":
            out["user"] += tokens
            out["notes"] += NOTE in text
        elif m["role"] == "assistant":
            out["desk"] += tokens
        else:
            fenced = text.startswith(FENCE)
            inner = text.removeprefix(FENCE).removesuffix("</external_content>").strip()
            cleared = inner.startswith("[result of ") and inner.endswith(" cleared]")
            out["cleared" if cleared else "fenced" if fenced else "results"] += tokens
            out["n_cleared"] += cleared
            out["n_fenced"] += fenced
            out["n_capped"] += CAPPED in text
    out["total"] = request_tokens(messages) + out["tools"]   # the prompt tokens the model counts
    return out


class _Watched:
    """An OpenAI client that records what each request sent and got (usage, or the 400)."""

    def __init__(self, client, log: list):
        self._client, self._log = client, log
        self.chat = self
        self.completions = self

    def create(self, **body):
        import openai

        try:
            reply = self._client.chat.completions.create(**body)
        except openai.BadRequestError as error:
            self._log.append({"refused": str(error.body.get("message") if isinstance(error.body, dict)
                                             else error)})
            raise
        from course.usage import read_usage
        usage = read_usage(reply.usage)
        self._log.append({"refused": None, "prompt": usage.prompt or 0, "cached": usage.cached or 0,
                          "completion": usage.completion or 0})
        return reply


def timed_out(result: dict) -> bool:
    """Whether a tool message is a flaky call's timeout (every family's says "timed out; try the
    same call again"): the call did nothing, the same call again will work."""
    return str(result.get("content", "")).startswith("Error: ") and "timed out; try the same call again" in result["content"]


def recorded_run(manager, task: dict, trial: int, client) -> tuple[dict, list[dict]]:
    """(the run's record as course.givens.capstone.run returns it, its steps): one step per
    request the model received, in order, each {"number", "session", "turn" (the user message
    being answered), "messages" (what the manager sent), "composition", "history_tokens" (the
    system prompt and the whole history so far: what sending everything would take), "refused" (the model's
    400 message, or None), "prompt", "cached", "completion", "reply" (the desk's message, or
    None), "results" (the tool messages that answered its calls), "timeouts", "leaks",
    "wrong" (judge's differences after this step's calls), and running totals "tokens",
    "cached_total", "prompt_total", "cost", "leaks_total"}."""
    asked: list[dict] = []
    answered: list[dict] = []

    tools = tools_of(task)

    def watched(history, view):
        request = manager(history, view)
        whole = composition([{"role": "system", "content": view["system"]}, *history], tools)["total"]
        asked.append({"at": len(history), "session": view["session"], "request": request, "whole": whole})
        return request

    record = run(watched, task, trial, _Watched(client, answered))
    history = record["history"]
    db = copy.deepcopy(task["db"])
    steps, totals = [], {"tokens": 0, "cached_total": 0, "prompt_total": 0, "cost": 0.0, "leaks_total": 0}
    for number, (a, got) in enumerate(zip(asked, answered), 1):
        at = a["at"]
        turn = next(m["content"] for m in reversed(history[:at]) if m["role"] == "user")
        reply = results = None
        if got["refused"] is None:
            reply = history[at]
            results = []
            for m in history[at + 1:]:
                if m["role"] != "tool":
                    break
                results.append(m)
            calls = {c["id"]: c for c in reply.get("tool_calls") or ()}
            for result in results:
                call = calls[result["tool_call_id"]]["function"]
                try:
                    args = json.loads(call["arguments"] or "{}")
                except json.JSONDecodeError:
                    args = None
                if isinstance(args, dict) and not timed_out(result):
                    execute_task(task, db, call["name"], args)
            totals["prompt_total"] += got["prompt"]
            totals["cached_total"] += got["cached"]
            totals["tokens"] += got["prompt"] + got["completion"]
            totals["cost"] += cost(got["prompt"], got["cached"], got["completion"])
        leaks = leaked(task["canaries"], reply) if reply else 0
        totals["leaks_total"] += leaks
        messages = a["request"]["messages"]
        steps.append({"number": number, "session": a["session"], "turn": turn, "messages": messages,
                      "composition": composition(messages, tools),
                      "history_tokens": a["whole"], "refused": got["refused"],
                      "prompt": got.get("prompt", 0), "cached": got.get("cached", 0),
                      "completion": got.get("completion", 0), "reply": reply, "results": results or [],
                      "timeouts": sum(map(timed_out, results or ())), "leaks": leaks,
                      "wrong": judge_task(task, db), **totals})
    if not record["error"] and steps and steps[-1]["wrong"] != record["wrong"]:
        raise AssertionError("the replayed database differs from the run's: "
                             f"{steps[-1]['wrong'][:3]} against {record['wrong'][:3]}")
    return record, steps


def recorded_baselines(path: Path = RECORDED) -> dict:
    """The baselines on the whole development set, as benchmarks/record_capstone.py wrote them:
    {"provenance": {...}, "scores": {manager: score_runs(...)}, "runs": [per-run rows],
    "trace_problems": [...]}."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} is missing: run python benchmarks/record_capstone.py") from None


# The development tasks the lesson runs live, each cut to a size that shows its hazard quickly
# (make_task's `size`: user turns); the recording runs them too, so the lesson can check its
# live runs against the recorded ones. label -> (family, development seed, size)
LESSON_TASKS = {"desk-103": ("desk", 103, 18), "desk-104, 10 turns": ("desk", 104, 10),
                "desk-105, 12 turns": ("desk", 105, 12)}


def lesson_tasks() -> dict[str, dict]:
    """The lesson's tasks by label (LESSON_TASKS), generated from development seeds only."""
    from course.givens.capstone import DEV_SEEDS, FAMILY_DEV_SEEDS, make_task

    seeds = {"desk": DEV_SEEDS, **FAMILY_DEV_SEEDS}
    assert all(seed in seeds[family] for family, seed, _ in LESSON_TASKS.values()), \
        "the lesson uses development seeds only"
    return {label: make_task(seed, size=size, family=family)
            for label, (family, seed, size) in LESSON_TASKS.items()}


def run_row(record: dict) -> dict:
    """What the recording keeps of a run (and the lesson compares): its verdict and its counts."""
    return {k: record[k] for k in ("task", "family", "trial", "success", "leaks", "refused", "requests",
                                   "prompt_tokens", "cached_tokens", "completion_tokens", "cost", "error")}


# What a live run and its recording must share: the verdict and the token counts (the cache's
# figures depend on what the same server ran before, so they may differ).
COMPARED = ("task", "success", "leaks", "refused", "requests", "prompt_tokens", "completion_tokens", "error")


def same_as_recorded(recorded_rows: list[dict], label: str, manager: str, record: dict) -> bool:
    """Whether `record` (a live run of `manager` on the lesson task `label`) is the recorded one."""
    row = next((r for r in recorded_rows if r["label"] == label and r["manager"] == manager), None)
    return row is not None and all(row[k] == record[k] for k in COMPARED)


def repeated_calls(steps: list[dict]) -> tuple[int, int]:
    """(calls that repeat an earlier call of the run, same tool and arguments, other than the retry
    of a timeout; the most times one call was made while answering one customer turn)."""
    seen, per_turn, again, most = set(), {}, 0, 0
    retry = set()
    for s in steps:
        if not s["reply"]:
            continue
        results = {r["tool_call_id"]: r for r in s["results"]}
        for c in s["reply"].get("tool_calls") or ():
            key = (c["function"]["name"], c["function"]["arguments"])
            if key in seen and key not in retry:
                again += 1
            retry.discard(key)
            if timed_out(results.get(c["id"], {})):
                retry.add(key)
            seen.add(key)
            turn = (s["session"], s["turn"], key)
            per_turn[turn] = per_turn.get(turn, 0) + 1
            most = max(most, per_turn[turn])
    return again, most
