"""Prompt caching, measured (Chapter 05): what keeps the cache warm and what breaks it.

A provider reuses its work for the longest prefix a new request shares, token for token, with
an earlier one, and reports it in `usage.prompt_tokens_details.cached_tokens`. An agent run is
ideal for this: request N is request N-1 plus one more step, as long as nothing earlier in the
request changes. This module replays one scripted agent run (the same steps for everybody, so
the runs are comparable) under several ways of building the requests, sends every request to
a real OpenAI-compatible endpoint, and reads back what was cached.

Each run's system prompt starts with its own session line, so runs measured one after another
on the same server do not warm each other's cache. The tool definitions come before the system
prompt in the teaching model's template; they are kept well under the 1,024-token minimum so
that they alone can never be reported as a cache hit. For numbers from a clean slate use a
private server: `with course.llm.serve() as server: client = server.client()`.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from solutions.costs import OPENAI_RULES, CacheRules, usage_request
from solutions.tokens import count_request_tokens, request_token_ids

STRATEGIES = {
    "append-only": "fixed system prompt and tools, history only appended",
    "timestamp at the end": "the current time sent in a last user message, not kept",
    "timestamp in system prompt": "the system prompt starts with the current time",
    "tools reordered": "tool definitions shuffled on every call",
    "unstable JSON keys": "tool-call arguments re-serialised with keys in random order",
    "sliding window": "only the last few steps of history are sent",
    "compact every step": "older steps replaced by a new summary on every call",
    "compact at threshold": "a summary only when the request would exceed a token threshold",
}
SLIDING_WINDOW_STEPS = 4
KEEP_RECENT_STEPS = 3
COMPACT_THRESHOLD_TOKENS = 4_000
START_TIME = datetime(2026, 9, 14, 10, 30, 45, 123456)

SYSTEM_PROMPT = """\
You are a build engineer agent working inside one firmware repository. You fix build and test
failures with the smallest change that works.

Rules:
1. Read before you write: look at the file, the build log or the test output first.
2. Use the tools; never guess a file's content or a command's output.
3. Change one thing at a time, then rebuild to check it.
4. Keep every error message you quote exactly as the tool returned it.
5. Never delete tests, never weaken an assertion to make it pass.
6. Paths are relative to the repository root; stay inside it.
7. When the build and the tests pass, answer with a short report: what was wrong, what you
   changed (file and line), how you checked it.
"""

TOOLS = [
    {"type": "function", "function": {
        "name": "read_file",
        "description": "Read part of a text file in the repository, with line numbers.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "file path relative to the repository root"},
            "offset": {"type": "integer", "description": "first line to read (1-based)"},
            "limit": {"type": "integer", "description": "number of lines to read"}},
            "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "search_code",
        "description": "Search the repository for a literal string; returns path:line: text.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "the text to look for"},
            "glob": {"type": "string", "description": "only files matching this pattern"},
            "max_results": {"type": "integer", "description": "stop after this many matches"}},
            "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "run_command",
        "description": "Run a build or test command in the repository and return its output.",
        "parameters": {"type": "object", "properties": {
            "command": {"type": "string", "description": "the command line to run"},
            "timeout_s": {"type": "integer", "description": "give up after this many seconds"},
            "cwd": {"type": "string", "description": "working directory, relative to the root"}},
            "required": ["command"]}}},
    {"type": "function", "function": {
        "name": "write_file",
        "description": "Replace lines of a text file in the repository with new text.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "file path relative to the repository root"},
            "start_line": {"type": "integer", "description": "first line to replace"},
            "end_line": {"type": "integer", "description": "last line to replace"},
            "text": {"type": "string", "description": "the new lines"}},
            "required": ["path", "start_line", "end_line", "text"]}}},
]


# --------------------------------------------------------------------------- the scripted run

class ScriptStep(NamedTuple):
    call_id: str
    tool: str
    arguments: dict   # kept as a dict: how it is serialised is part of the experiment
    result: str


def _project_listing() -> str:
    """A made-up repository's file list, preloaded into the task as agents often do."""
    folders = {"src/drivers/sensor": "c", "src/drivers/radio": "c", "src/app": "c", "src/ota": "c",
               "third_party/zlib": "c", "cmake/toolchains": "cmake", "tests/unit": "py",
               "tests/integration": "py"}
    names = ["config", "init", "power", "buffer", "protocol", "update", "crc", "log"]
    return "\n".join(f"{folder}/{name}_{i}.{ext}" for folder, ext in folders.items()
                     for i, name in enumerate(names))


TASK = ("The aarch64 cross build of the firmware fails. Find out why, fix it, and make sure the "
        "unit tests pass.\n\nRepository files:\n" + _project_listing())


def _log(step: int, lines: int = 18) -> str:
    rows = [f"[{(step * 7 + i) % 100:3d}%] Building C object src/app/CMakeFiles/app.dir/"
            f"module_{step}_{i}.c.o" for i in range(lines)]
    rows.append("/usr/bin/ld: libz.a(inflate.c.o): Relocations in generic ELF (EM: 62) "
                f"[pass {step}]")
    return "\n".join(rows)


def _file(path: str, start: int, lines: int = 20) -> str:
    stem = path.rsplit("/", 1)[-1].split(".")[0].upper()
    return "\n".join(f"{n:4d}  set(FIRMWARE_{stem}_{n} \"${{CMAKE_CURRENT_LIST_DIR}}/opt{n % 7}\")"
                     for n in range(start, start + lines))


def scripted_steps(n: int = 12) -> list[ScriptStep]:
    """A deterministic agent run: the same tool calls and results for every strategy."""
    if n < 1:
        raise ValueError("a run needs at least one step")
    plan = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            args = {"command": f"cmake --build build-aarch64 --target firmware_{i}",
                    "timeout_s": 600, "cwd": "."}
            plan.append(("run_command", args, _log(i)))
        elif kind == 1:
            path = f"cmake/toolchains/aarch64_{i}.cmake"
            args = {"path": path, "offset": 10 * i + 1, "limit": 20}
            plan.append(("read_file", args, _file(path, 10 * i + 1)))
        elif kind == 2:
            args = {"query": f"find_package(ZLIB {i}", "glob": "**/*.cmake", "max_results": 20}
            hits = "\n".join(f"cmake/module_{j}.cmake:{10 + j * i}: find_package(ZLIB REQUIRED)"
                             for j in range(12))
            plan.append(("search_code", args, hits))
        else:
            args = {"path": f"cmake/toolchains/aarch64_{i}.cmake", "start_line": 3 + i,
                    "end_line": 4 + i, "text": f"set(ZLIB_ROOT /opt/sysroots/aarch64/usr) # {i}"}
            result = f"replaced lines {3 + i}-{4 + i}; file has {80 + i} lines"
            plan.append(("write_file", args, result))
    return [ScriptStep(f"call_{i + 1:03d}", tool, args, result)
            for i, (tool, args, result) in enumerate(plan)]


def _call_messages(step: ScriptStep, arguments: str) -> list[dict]:
    call = {"id": step.call_id, "type": "function",
            "function": {"name": step.tool, "arguments": arguments}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": step.call_id, "content": step.result}]


def _summary(steps: list[ScriptStep]) -> str:
    lines = [f"- {s.call_id} {s.tool}({json.dumps(s.arguments, sort_keys=True)}) -> "
             f"{s.result.splitlines()[-1][:80]}" for s in steps]
    return f"Summary of steps 1-{len(steps)} (older history, compacted):\n" + "\n".join(lines)


def _shuffled(items: list, seed: str) -> list:
    items = list(items)
    random.Random(seed).shuffle(items)
    return items


# --------------------------------------------------------------------------- building requests

@dataclass
class _RunState:
    """What a strategy remembers between calls (only compaction at a threshold needs any)."""

    summary_upto: int = 0          # steps folded into the summary so far
    last_tools: list | None = None


def build_request(strategy: str, k: int, steps: list[ScriptStep], state: _RunState | None = None,
                  session: str = "") -> tuple[list[dict], list[dict]]:
    """(messages, tools) for call number k (0-based), which has steps[:k] as its history."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of: {', '.join(STRATEGIES)}")
    state = state or _RunState()
    clock = (START_TIME + timedelta(seconds=7.3 * k)).isoformat(sep=" ")
    system = f"Session: {session or strategy}.\n" + SYSTEM_PROMPT
    if strategy == "timestamp in system prompt":
        system = f"Session: {session or strategy}.\nCurrent time: {clock}\n" + SYSTEM_PROMPT
    tools = TOOLS
    if strategy == "tools reordered":
        tools = _shuffled(TOOLS, f"tools-{k}")
        while k and tools == state.last_tools:  # a reorder that changes nothing teaches nothing
            tools = _shuffled(tools, f"tools-{k}-again")
        state.last_tools = tools

    def arguments(step: ScriptStep) -> str:
        if strategy == "unstable JSON keys":
            keys = _shuffled(list(step.arguments), f"keys-{k}-{step.call_id}")
            return json.dumps({key: step.arguments[key] for key in keys}, ensure_ascii=False)
        return json.dumps(step.arguments, ensure_ascii=False)

    head = [{"role": "system", "content": system}, {"role": "user", "content": TASK}]
    history = steps[:k]
    summary_of: list[ScriptStep] = []
    if strategy == "sliding window":
        history = history[-SLIDING_WINDOW_STEPS:]
    elif strategy == "compact every step" and len(history) > KEEP_RECENT_STEPS:
        summary_of, history = history[:-KEEP_RECENT_STEPS], history[-KEEP_RECENT_STEPS:]
    elif strategy == "compact at threshold":
        summary_of, history = history[:state.summary_upto], history[state.summary_upto:]
    messages = list(head)
    if summary_of:
        messages.append({"role": "user", "content": _summary(summary_of)})
    for step in history:
        messages += _call_messages(step, arguments(step))
    if strategy == "compact at threshold" and len(history) > KEEP_RECENT_STEPS \
            and count_request_tokens(messages, tools) > COMPACT_THRESHOLD_TOKENS:
        state.summary_upto = k - KEEP_RECENT_STEPS
        return build_request(strategy, k, steps, state, session)
    if strategy == "timestamp at the end":
        messages.append({"role": "user", "content": f"(Current time: {clock}) Continue."})
    return messages, tools


# --------------------------------------------------------------------------- measuring

class RequestRecord(NamedTuple):
    call: int               # 1-based call number in the run
    prompt_tokens: int      # reported by the API
    cached_tokens: int      # reported by the API
    completion_tokens: int  # reported by the API
    counted_tokens: int     # count_request_tokens of the request we sent
    expected_cached: int    # our own prediction: longest shared prefix under `rules`


def _shared_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def expected_cached_tokens(earlier: list[list[int]], ids: list[int],
                           rules: CacheRules = OPENAI_RULES) -> int:
    """Cached tokens a prefix cache should report: the longest prefix `ids` shares with any
    earlier request, rounded down to whole blocks, 0 below the minimum."""
    return rules.cached(max((_shared_prefix(e, ids) for e in earlier), default=0))


def run_strategy(client, strategy: str, model: str | None = None, steps: int = 12,
                 rules: CacheRules = OPENAI_RULES) -> list[RequestRecord]:
    """Send one scripted run under `strategy` and record what the API reports per call."""
    if model is None:
        import course.llm

        model = course.llm.model_name()
    script = scripted_steps(steps)
    state, sent, records = _RunState(), [], []
    for k in range(steps):
        messages, tools = build_request(strategy, k, script, state)
        ids = request_token_ids(messages, tools)
        response = client.chat.completions.create(model=model, messages=messages, tools=tools,
                                                  max_tokens=64)
        usage = usage_request(response.usage, k + 1)  # OpenAI's or DeepSeek's usage shape
        records.append(RequestRecord(
            k + 1, usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, len(ids),
            expected_cached_tokens(sent, ids, rules)))
        sent.append(ids)
    return records


def measure_strategies(client, model: str | None = None, strategies=None, steps: int = 12,
                       rules: CacheRules = OPENAI_RULES) -> dict[str, list[RequestRecord]]:
    """{strategy: its per-call records}, every strategy replaying the same scripted run."""
    names = list(STRATEGIES) if strategies is None else list(strategies)
    return {name: run_strategy(client, name, model, steps, rules) for name in names}


def hit_rate_table(measurements: dict[str, list[RequestRecord]]) -> list[dict]:
    """One row per strategy: prompt and cached tokens summed over the run, and the hit rate."""
    rows = []
    for name, records in measurements.items():
        prompt = sum(r.prompt_tokens for r in records)
        cached = sum(r.cached_tokens for r in records)
        rows.append({"strategy": name, "calls": len(records), "prompt_tokens": prompt,
                     "cached_tokens": cached, "hit_rate": cached / prompt if prompt else 0.0,
                     "calls_with_hits": sum(1 for r in records if r.cached_tokens),
                     "last_prompt": records[-1].prompt_tokens if records else 0})
    return rows


def format_hit_rate_table(rows: list[dict]) -> str:
    lines = [f"{'strategy':<28} {'prompt tokens':>13} {'cached':>8} {'hit rate':>8} "
             f"{'calls hit':>9}"]
    for r in rows:
        lines.append(f"{r['strategy']:<28} {r['prompt_tokens']:>13,} {r['cached_tokens']:>8,} "
                     f"{r['hit_rate']:>8.1%} {r['calls_with_hits']:>4}/{r['calls']:<4}")
    return "\n".join(lines)


def _bar_colour(rate: float, best: float) -> str:
    """Green: as good as the best strategy (within 10 %); orange: at least half; red: less."""
    if best and rate >= 0.9 * best:
        return "tab:green"
    return "tab:orange" if best and rate >= 0.5 * best else "tab:red"


def plot_hit_rates(rows: list[dict], ax=None):
    """Horizontal bars of the cache hit rate per strategy, best at the top, each labelled."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    ordered = sorted(rows, key=lambda r: r["hit_rate"])
    best = max((r["hit_rate"] for r in rows), default=0.0)
    rates = [100 * r["hit_rate"] for r in ordered]
    bars = ax.barh([r["strategy"] for r in ordered], rates,
                   color=[_bar_colour(r["hit_rate"], best) for r in ordered])
    ax.bar_label(bars, labels=[f"{rate:.0f} %" for rate in rates], padding=3, fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("cached share of all prompt tokens (%)")
    ax.set_title("Prompt-cache hit rate by how the requests are built")
    return ax
