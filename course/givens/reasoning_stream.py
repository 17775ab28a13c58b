"""What Chapter 13 gives (reasoning in the context, and the raw token stream): the tools of the
streamed request and their schemas, the reasoning models' names and history policies, a token
count of reasoning as the template renders it, the decision-record format, and the long tool loop
the lesson and the lab measure (a replayed run: recorded reasoning, calls and results). No
answers here: the lab's exercises are in `solutions.reasoning_stream`.

The loop is written by code, not by a model: step k's reasoning looks at one file, rules out one
suspect with a reason that only that step's reasoning holds (its probe: "why did you rule out
<suspect>?"), and calls one tool. So what a history policy keeps is visible in the prompt: a
probe is kept when the reason is still in the text the model reads.
"""
from __future__ import annotations

import hashlib
import json

from course.llm.models import REASONER  # noqa: F401 (given to the lab: the models by policy)
from course.llm.reasoning import (FIELD, PASS_BACK, POLICIES, SINCE_LAST_USER, STRIP,  # noqa: F401
                                  is_tool_response, last_real_user, think_text)
from course.llm.template import encoding

SYSTEM = "You are a travel assistant. Use the tools for weather and local time."
ASK = "What time is it in Vancouver, and what is the weather there?"

TOOLS: list[dict] = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the current weather for a specific city",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["city"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "get_current_time", "description": "Get the current date and time in a specific timezone",
        "parameters": {"type": "object", "properties": {
            "timezone": {"type": "string", "description": "Timezone name, e.g. America/Vancouver"}},
            "required": ["timezone"], "additionalProperties": False}}},
]
# JSON Schema's scalar types and the Python types that satisfy them (bool is not an integer).
SCHEMA_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
                "object": (dict,), "array": (list,), "null": (type(None),)}


def schemas(tools: list[dict] | None = None) -> dict[str, dict]:
    """Each tool's `parameters` schema by tool name."""
    return {t["function"]["name"]: t["function"].get("parameters") or {"type": "object"}
            for t in (TOOLS if tools is None else tools)}


def think_tokens(reasoning: str | None) -> int:
    """Tokens of one message's reasoning as the template renders it (`<think>` ... `</think>`,
    what a reply bills as reasoning_tokens); 0 for None."""
    return len(encoding().encode_ordinary(think_text(reasoning))) if isinstance(reasoning, str) else 0


RECORD_PREFIX = "[decision record] "


def decision_record(reasoning: str) -> str:
    """The reasoning distilled to what later steps need: what was ruled out and why, and what was
    decided (its lines starting "ruled out" or "So I"), one line, prefixed RECORD_PREFIX. A record
    stays a record."""
    if reasoning.startswith(RECORD_PREFIX):
        return reasoning
    kept = [line.strip() for line in reasoning.splitlines()
            if line.strip().startswith(("ruled out", "So I"))]
    if not kept:
        kept = reasoning.strip().splitlines()[-1:]  # no such line: the last one
    return RECORD_PREFIX + "; ".join(kept)


# ------------------------------------------------------------------ the long loop (replayed)
LOOP_SYSTEM = ("You are a build engineer. The nightly build fails; find the cause with the tools. "
               "Check one module at a time and say why you rule a suspect out.")
LOOP_TASK = "The nightly build of the payments service fails since Monday. Find out why."
LOOP_TOOLS: list[dict] = [
    {"type": "function", "function": {"name": name, "description": about, "parameters": {
        "type": "object", "properties": {param: {"type": "string"}}, "required": [param],
        "additionalProperties": False}}}
    for name, about, param in (("read_file", "Read a file of the repository", "path"),
                               ("run_tests", "Run the tests of one module", "module"),
                               ("git_log", "Show the commits that touched a path", "path"))]
_AREAS = ("ledger", "refunds", "invoices", "currency", "auth", "webhooks", "reports", "scheduler")


def _tag(k: int) -> str:
    return hashlib.sha256(f"step-{k}".encode()).hexdigest()[:8]


def suspect(k: int) -> str:
    """The suspect step k rules out."""
    return f"{_AREAS[k % len(_AREAS)]}_{k:03d}"


def reason(k: int) -> str:
    """Why step k rules its suspect out: only step k's reasoning says it."""
    return f"its checksum {_tag(k)} matches Sunday's green build"


def probe(k: int) -> dict:
    """The question whose answer is only in step k's reasoning, and the text that answers it."""
    return {"step": k, "question": f"Why did you rule out {suspect(k)}?", "answer": reason(k)}


def loop_step(k: int) -> list[dict]:
    """Step k (1-based) of the loop: the assistant message (reasoning, one call) and its result."""
    name, param = (("read_file", "path"), ("run_tests", "module"), ("git_log", "path"))[k % 3]
    value = f"services/payments/{suspect(k)}.py" if param == "path" else suspect(k)
    reasoning = (f"looked at: step {k}. The failure log still points at the payments service. "
                 f"I compared the module {suspect(k)} with the last green build, read its imports "
                 f"and the configuration it loads, and checked whether Monday's deploy touched it. "
                 f"Nothing there explains a failure that starts on Monday.\n"
                 f"ruled out {suspect(k)}: {reason(k)}.\n"
                 f"So I call {name}({param}={json.dumps(value)}).")
    call_id = f"call_{k:03d}_{_tag(k)}"
    return [{"role": "assistant", "content": None, FIELD: reasoning,
             "tool_calls": [{"id": call_id, "type": "function",
                             "function": {"name": name, "arguments": json.dumps({param: value})}}]},
            {"role": "tool", "tool_call_id": call_id,
             "content": f"{name} {value}: ok, no change since Sunday ({_tag(k)})."}]


def loop_history(steps: int) -> list[dict]:
    """The system prompt, the task, then `steps` steps: the history request steps+1 sends."""
    messages = [{"role": "system", "content": LOOP_SYSTEM}, {"role": "user", "content": LOOP_TASK}]
    for k in range(1, steps + 1):
        messages += loop_step(k)
    return messages
