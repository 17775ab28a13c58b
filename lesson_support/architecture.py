"""Chapter 15's lesson support: the action-space experiment, the cache-key session and the
few-shot rut (course/llm/rut.py, the teaching model's simulation of it). The
sub-agent modes and the assembled context manager are in `lesson_support.architecture_runs`;
the answers in `solutions.architecture`.

The action space (the second textbook section, 21.6.6). One ops agent's eight asks, offered
three tool sets:

    many specialised   one tool per service and action (37): get_payouts_logs, restart_auth_service...
    ten atomic         read_file, write_file, edit_file, list_dir, search_code, run_tests,
                       get_metrics, restart_service, deploy_service, read_logs
    atomic + shell     the ten and execute_shell, which runs filters (grep, wc, sort...) in
                       chapter 07's sandbox so that only their output enters the context

measured by the tokens the tools add to every request's prefix, the tool-choice errors over
seeded trials at temperature 1 (the teaching model's sampling of "which tool fits an ask",
course/llm/sampling.py: every offered tool is a candidate, so many similar tools share out the
probability), and the tokens of data the log ask brings into the context (the 50 MB log).
"""
from __future__ import annotations

import json

from course.givens.architecture import LOG_NAME, count_tokens
from course.givens.provider_context import fixed_tokens
from course.usage import read_usage
from solutions.architecture import filter_in_sandbox


def _tool(name: str, description: str, params: dict) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": {k: {"type": "string", "description": v} for k, v in params.items()},
        "required": list(params)}}}


SERVICES = ("checkout", "payouts", "ledger", "billing", "auth", "search")
DAY = {"date": "Day, e.g. 2026-03-14"}
SPECIALISED: list[dict] = [t for s in SERVICES for t in (
    _tool(f"get_{s}_logs", f"Get the recent logs of the {s} service", DAY),
    _tool(f"get_{s}_error_logs", f"Get the error lines of the {s} service's logs", DAY),
    _tool(f"get_{s}_metrics", f"Get the latency and error-rate metrics of the {s} service",
          {"window": "Time window, e.g. 1h"}),
    _tool(f"restart_{s}_service", f"Restart the {s} service", {"reason": "Why"}),
    _tool(f"deploy_{s}_service", f"Deploy a build of the {s} service", {"version": "Build version"}))] + [
    _tool("read_source_file", "Read a source file of the repository", {"path": "Path"}),
    _tool("read_config_file", "Read a configuration file", {"path": "Path"}),
    _tool("write_source_file", "Write a source file", {"path": "Path", "content": "New contents"}),
    _tool("search_source_code", "Search the source code for a pattern", {"query": "Pattern"}),
    _tool("list_source_dir", "List a directory of the repository", {"path": "Path"}),
    _tool("run_unit_tests", "Run the unit tests", {"target": "Test path"}),
    _tool("run_integration_tests", "Run the integration tests", {"target": "Test path"})]
ATOMIC: list[dict] = [
    _tool("read_file", "Read a text file (source, config or log) and return its contents",
          {"path": "Path, e.g. logs/payouts.log"}),
    _tool("write_file", "Create or replace a file", {"path": "Path", "content": "New contents"}),
    _tool("edit_file", "Replace one piece of text in a file",
          {"path": "Path", "old": "Text to replace", "new": "Replacement"}),
    _tool("list_dir", "List the files of a directory", {"path": "Path"}),
    _tool("search_code", "Search the code base for a pattern; returns matching lines", {"query": "Pattern"}),
    _tool("run_tests", "Run tests (unit or integration) and return the report", {"target": "Test path"}),
    _tool("get_metrics", "Get a service's latency and error-rate metrics", {"service": "Service name"}),
    _tool("restart_service", "Restart a service", {"service": "Service name"}),
    _tool("deploy_service", "Deploy a build of a service", {"service": "Service name", "version": "Build version"}),
    _tool("read_logs", "Read the recent logs of a service", {"service": "Service name"})]
SHELL_TOOL = _tool("execute_shell", "Run a command line in the sandbox that filters, counts or sorts "
                   "the lines of files and logs (grep, wc, head, tail, sort, awk) and prints only "
                   "its output", {"command": "The command line, e.g. grep status=500 logs/api.log"})
DESIGNS: dict[str, list[dict]] = {"many specialised": SPECIALISED, "ten atomic": ATOMIC,
                                  "atomic + shell": ATOMIC + [SHELL_TOOL]}
SYSTEM = "You are an ops agent for the ledgerline payments service. Use the tools."
LOG_ASK = "Filter logs/api.log for the status=500 errors of the payouts service."
# Each ask, and the tools that do it right in each design (in DESIGNS' order).
ASKS: list[tuple[str, tuple[set, set, set]]] = [
    ("Show the recent logs of the payouts service.", ({"get_payouts_logs"}, {"read_logs"}, {"read_logs"})),
    ("Get the error-rate metrics of the checkout service.",
     ({"get_checkout_metrics"}, {"get_metrics"}, {"get_metrics"})),
    ("Read the file src/ledgerline/ingest/reader.py.", ({"read_source_file"}, {"read_file"}, {"read_file"})),
    ("Restart the ledger service.", ({"restart_ledger_service"}, {"restart_service"}, {"restart_service"})),
    ("Search the code for commit_offset.", ({"search_source_code"}, {"search_code"}, {"search_code"})),
    ("Run the unit tests in tests/ingest.", ({"run_unit_tests"}, {"run_tests"}, {"run_tests"})),
    ("Deploy build 4.2.1 of the billing service.",
     ({"deploy_billing_service"}, {"deploy_service"}, {"deploy_service"})),
    (LOG_ASK, ({"get_payouts_error_logs"}, {"read_logs", "read_file"}, {"execute_shell"})),
]
TEMPERATURE = 1.0
FILTER = f"grep status=500 {LOG_NAME}"   # what execute_shell runs for the log ask
FILTER_LINES = 20


def prefix_tokens(tools: list[dict]) -> int:
    """What a tool list adds to every request (the tools block of course.llm.template)."""
    return fixed_tokens(tools) - fixed_tokens(None)


def choice_errors(client, model, tools: list[dict], design: int, seeds: range) -> list[int]:
    """Per ask, the seeded trials (temperature TEMPERATURE) whose first call is not a right tool."""
    errors = []
    for ask, right in ASKS:
        wrong = 0
        for seed in seeds:
            reply = client.chat.completions.create(
                model=model, messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": ask}],
                tools=tools, temperature=TEMPERATURE, seed=seed)
            calls = reply.choices[0].message.tool_calls or []
            wrong += not calls or calls[0].function.name not in right[design]
        errors.append(wrong)
    return errors


def log_tokens(path, sample_bytes: int = 1_000_000) -> dict:
    """The log's size and an estimate of its tokens (the first `sample_bytes`, counted exactly,
    scaled to the whole: counting 50 MB exactly takes longer than the lesson should)."""
    size = path.stat().st_size
    with open(path, encoding="utf-8") as f:
        sample = f.read(sample_bytes)
    sample = sample[: sample.rfind("\n") + 1]
    return {"bytes": size, "tokens": round(count_tokens(sample) * size / len(sample.encode()))}


def data_tokens(path, workspace) -> dict:
    """Tokens of data the log ask brings into the context in each design: the specialised tool
    returns the payouts service's error lines (someone wrote that tool for this ask); read_logs
    or read_file returns the whole log; execute_shell runs FILTER in the sandbox and at most
    FILTER_LINES lines enter."""
    errors = [line for line in open(path, encoding="utf-8") if "/v1/payouts/" in line and "status=500" in line]
    shell = filter_in_sandbox(FILTER, FILTER_LINES, workspace)
    return {"many specialised": count_tokens("".join(errors)), "ten atomic": log_tokens(path)["tokens"],
            "atomic + shell": shell["tokens"], "shell": shell, "error_lines": len(errors)}


def measure_designs(client, model, workspace, path, seeds: range = range(20), on_design=None) -> dict:
    """{design: {"tools", "prefix", "errors" (per ask), "trials", "data"}}. `on_design(name)`, if
    given, is called after each design is measured (a progress bar's `step`)."""
    data = data_tokens(path, workspace)
    out = {}
    for k, (name, tools) in enumerate(DESIGNS.items()):
        errors = choice_errors(client, model, tools, k, seeds)
        out[name] = {"tools": len(tools), "prefix": prefix_tokens(tools), "errors": errors,
                     "trials": len(ASKS) * len(seeds), "data": data[name]}
        if on_design is not None:
            on_design(name)
    return out


def design_table(results: dict) -> str:
    rows = [f"{'design':<17} {'tools':>5} {'prefix tokens':>13} {'choice errors':>14} {'log data tokens':>16}"]
    for name, r in results.items():
        rows.append(f"{name:<17} {r['tools']:>5} {r['prefix']:>13,} {sum(r['errors']):>6} of {r['trials']:<5} "
                    f"{r['data']:>16,}")
    return "\n".join(rows)


# ------------------------------------------------------------------ cache keys
def session_choices(n: int, seed: int = 15) -> list[dict]:
    """`n` requests of one day's traffic: each from a user on the Team or Free plan, asking for
    detail or brevity; the date changes at midnight, halfway through (deterministic)."""
    import random

    rnd = random.Random(seed)
    return [{"date": int(k >= n // 2), "plan": rnd.randint(0, 1), "verbose": rnd.randint(0, 1)} for k in range(n)]


def session(client, model, fragments, choices, tools, render, question: str) -> list:
    """Send one request per choice: the scheme's prompt for that choice, then `question`; the
    usages in order (cached tokens come from the earlier requests of this session only)."""
    usages = []
    for choice in choices:
        messages = [{"role": "system", "content": render(fragments, choice)}, {"role": "user", "content": question}]
        usages.append(read_usage(client.chat.completions.create(model=model, messages=messages, tools=tools).usage))
    return usages


def hit_rate(usages) -> float | None:
    """Cached prompt tokens over prompt tokens; None when a provider does not report the cache."""
    if any(u.cached is None for u in usages):
        return None
    prompt = sum(u.prompt for u in usages)
    return sum(u.cached for u in usages) / prompt if prompt else 0.0


# ------------------------------------------------------------------ the few-shot rut
RUT_SYSTEM = "You are a coding agent working in the repository ledgerline. Use the tools."
RUT_ASK = "Now search the code for commit_offset."
RUNBOOK = "docs/runbook/ingest.md"
# Structured variation: the same actions and observations, worded a little differently each time.
VARIED_TEXTS = ("Reading page {n}.", "Next, page {n} of the runbook.", "Page {n} now.", "On to page {n}.")
VARIED_HEADS = ("{path}, page {n} of 12:", "page {n} ({path}):", "runbook, p. {n}:")


def rut_history(pages: int, varied: bool) -> list[dict]:
    """An agent that has read `pages` pages of the runbook, one call a turn, then is asked to
    search the code: every turn written alike, or with structured variation."""
    messages = [{"role": "system", "content": RUT_SYSTEM},
                {"role": "user", "content": f"Read the runbook {RUNBOOK} page by page."}]
    for n in range(1, pages + 1):
        text = (VARIED_TEXTS[n % len(VARIED_TEXTS)] if varied else VARIED_TEXTS[0]).format(n=n)
        head = (VARIED_HEADS[n % len(VARIED_HEADS)] if varied else VARIED_HEADS[0]).format(path=RUNBOOK, n=n)
        call = {"id": f"call_page_{n}", "type": "function", "function": {
            "name": "read_file", "arguments": json.dumps({"path": RUNBOOK, "page": n})}}
        messages += [{"role": "assistant", "content": text, "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": call["id"],
                      "content": head + "\nDrain timeout 45s; offsets commit after flush_batch."}]
    return messages + [{"role": "user", "content": RUT_ASK}]


def rut_errors(client, model, tools, pages: int, varied: bool, seeds: range) -> int:
    """Seeded trials at TEMPERATURE whose first call is not search_code."""
    wrong = 0
    for seed in seeds:
        reply = client.chat.completions.create(model=model, messages=rut_history(pages, varied), tools=tools,
                                               temperature=TEMPERATURE, seed=seed)
        calls = reply.choices[0].message.tool_calls or []
        wrong += not calls or calls[0].function.name != "search_code"
    return wrong
