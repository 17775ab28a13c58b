"""Chapter 14's givens: what lab 14 hands the student and the answers build on, no answer among
them (lab 14 asks for `chain_turns`, `clear_tool_uses`, `cache_loss` and `choose_strategy`).

    the conversation  TOOLS (function tools in the Responses format), CHAT_TOOLS (the same in
                      the Chat Completions format), execute_tool (their deterministic results),
                      TURNS (the lesson's ten user turns), INSTRUCTIONS
    token counting    message_tokens, fixed_tokens: what one message and what the rest (tools,
                      reply primer) add to the teaching model's prompt (course.llm.template),
                      so the tokens a client-side edit frees are the server's exact figures
    context editing   PLACEHOLDER (what a cleared tool result becomes), EDIT_TYPE,
                      tool_run (a tool-heavy Chat Completions history, deterministic)
    choosing          STRATEGIES, REQUIREMENTS (the keys `choose_strategy` reads)

The answers (`solutions.provider_context`) re-export them.
"""
from __future__ import annotations

import json
import random
from functools import lru_cache

from course.llm.context_editing import EDIT_TYPE, PLACEHOLDER  # noqa: F401 (given to the lab)
from course.llm.template import fixed_token_count, message_token_count

INSTRUCTIONS = "You are a travel assistant. Use the tools for weather and local time."

TOOLS: list[dict] = [
    {"type": "function", "name": "get_weather",
     "description": "Get the current weather for a specific city",
     "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}},
                    "required": ["city"]}},
    {"type": "function", "name": "get_current_time",
     "description": "Get the current date and time in a specific timezone",
     "parameters": {"type": "object", "properties": {
         "timezone": {"type": "string", "description": "Timezone name, e.g. America/Vancouver"}},
         "required": ["timezone"]}},
]
CHAT_TOOLS: list[dict] = [{"type": "function", "function": {k: t[k] for k in ("name", "description", "parameters")}}
                          for t in TOOLS]

_WEATHER = {"vancouver": (13.2, "light rain"), "lisbon": (21.5, "sunny"), "tokyo": (17.0, "cloudy"),
            "nairobi": (24.1, "clear"), "oslo": (4.3, "snow showers")}


def execute_tool(name: str, arguments: dict) -> str:
    """The result of a call, as the JSON text a function_call_output carries (deterministic)."""
    if name == "get_weather":
        city = str(arguments.get("city", ""))
        temp, sky = _WEATHER.get(city.lower(), (15.0, "overcast"))
        return json.dumps({"city": city, "temp_c": temp, "conditions": sky})
    if name == "get_current_time":
        zone = str(arguments.get("timezone", "UTC"))
        return json.dumps({"timezone": zone, "time": "2026-03-14T09:30:00", "weekday": "Saturday"})
    return json.dumps({"error": f"unknown tool {name}"})


TURNS: list[str] = [
    "What is the weather in Vancouver?",
    "What time is it in Tokyo?",
    "What is the weather in Lisbon?",
    "What is the weather in Oslo?",
    "What is the weather in Nairobi?",
    "What time is it in Lisbon?",
    "What is the weather in Tokyo?",
    "What time is it in Oslo?",
    "What time is it in Nairobi?",
    "What time is it in Vancouver?",
]


@lru_cache(maxsize=20_000)
def _message_tokens(key: str) -> int:
    return message_token_count(json.loads(key))


def message_tokens(message: dict) -> int:
    """What one Chat Completions message adds to the teaching model's prompt_tokens (each
    distinct message is tokenised once)."""
    return _message_tokens(json.dumps(message, sort_keys=True, ensure_ascii=False))


def fixed_tokens(tools: list | None = None) -> int:
    """What the prompt holds besides its messages: the tools block (if any) and the reply primer.
    prompt_tokens == fixed_tokens(tools) + sum(message_tokens(m) for m in messages)."""
    return fixed_token_count(tools)


def tool_run(steps: int = 40, seed: int = 14) -> list[dict]:
    """A tool-heavy history: a system prompt, a task, then `steps` assistant turns, each one or
    two calls (search_docs, read_file, run_tests; every fifth a save_note) and their results,
    some long. Deterministic for a seed; every call paired with its result."""
    rnd = random.Random(seed)
    messages = [{"role": "system", "content": "You are a coding agent. Keep notes of decisions with save_note."},
                {"role": "user", "content": "Find why the nightly export drops rows, fix it, keep the tests green."}]
    for n in range(steps):
        names = ["save_note"] if n % 5 == 4 else rnd.sample(["search_docs", "read_file", "run_tests"], rnd.randint(1, 2))
        calls = [{"id": f"call_{n:03d}_{k}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps({"query": f"export step {n}", "part": k})}}
                 for k, name in enumerate(names)]
        messages.append({"role": "assistant", "content": f"Step {n}: checking part of the export.", "tool_calls": calls})
        for k, call in enumerate(calls):
            name = call["function"]["name"]
            if name == "save_note":
                body = f"saved note-{n:03d}: decision {n} kept (batch size 500, retry 3)"
            else:
                lines = rnd.randint(5, 120)
                body = "\n".join(f"{name} line {i} of step {n}: row id r{n * 1000 + i} ok" for i in range(lines))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": body})
    return messages


STRATEGIES = ("own compaction", "server compaction", "context editing")

# What choose_strategy reads; a missing key is False (or "openai" for provider).
REQUIREMENTS: dict[str, str] = {
    "provider": 'who serves the model: "openai" (Responses API), "anthropic" (Messages API) or "other"',
    "control": "you must decide what a summary keeps",
    "inspect": "someone must be able to read and check what survives a compaction",
    "portable": "the conversation may move to another provider or model family",
    "no_retention": "nothing may stay stored on the provider (store=false, zero data retention)",
    "tool_heavy": "the context is mostly old tool results that could be fetched again",
}
