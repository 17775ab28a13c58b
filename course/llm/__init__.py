"""The model every notebook talks to.

By default a local, deterministic, OpenAI-compatible *teaching model* (a rule-based stand-in,
not an LLM) that the course starts on 127.0.0.1 when first needed: no key, no network, the same
answer every run. Set these environment variables to use a real provider instead:

    COURSE_LLM_API_KEY    the provider's API key (required to switch)
    COURSE_LLM_BASE_URL   its OpenAI-compatible endpoint (omit for OpenAI itself)
    COURSE_LLM_MODEL      the model name to request (required to switch)

    client()       -> openai.OpenAI for the configured model
    model_name()   -> the model name to pass to chat.completions.create
    provider_configured() -> True when COURSE_LLM_API_KEY points the course at a real provider
    serve()        -> a private teaching model (fresh prompt cache), e.g. for measurements
    fresh_targets() -> a measurement's models: a private teaching model, then the provider if
                      one is configured, each with the label its figures carry (measuring.py)
    explain(c)     -> why the teaching model gave completion `c` (its `teaching_trace`, a field
                      no real provider sends; for one of theirs it says so)
    rule_table()   -> the teaching model's decision list: (position, rule, what it does)
    model_table()  -> the teaching model's names: (name, context window in tokens, what for);
                      a request over its window gets OpenAI's HTTP 400 context_length_exceeded
    REASONER       -> the reasoning models' names by history policy ("strip", "pass_back",
                      "since_last_user"): they reply with `reasoning_content` first and treat
                      earlier reasoning as their family does (course/llm/reasoning.py)

`temperature`, `top_p` and `seed` are taken as OpenAI takes them, with one difference: an
omitted temperature is 0 (OpenAI's default is 1), so every lesson gets the same reply every run.
Above 0, the rules' choices among scored candidates (which tool, which enum value, whether a
skill is loaded) are drawn from a softmax of scores that come from the context, reproducibly
per seed (course/llm/sampling.py; the trace shows each draw).

Beyond OpenAI's API, the teaching model simulates one feature of another provider: Anthropic's
context editing (`extra_body={"context_management": {"edits": [{"type":
"clear_tool_uses_20250919", ...}]}}`): past a trigger, the oldest tool results are cleared
before the model reads the request, and the reply's `context_management.applied_edits` says how
many and how many tokens that freed (course/llm/context_editing.py: what the simulation does,
and what the real feature does differently).

OpenAI's Responses API (`client.responses.create`, `.compact`, `.input_tokens.count`,
`.retrieve`, `.delete`) is served on the same decision list: stored conversations chained by
`previous_response_id` (billed whole every turn), truncation, a cache per `prompt_cache_key`,
and server-side compaction into a sealed, opaque item (course/llm/responses.py).
"""
from __future__ import annotations

from course.llm.explain import explain
from course.llm.policy import rule_table
from course.llm.models import SMALL_WINDOW_MODEL, model_table
from course.llm.server import MODEL_NAME
from course.llm.measuring import Target, announce, fresh_targets, targets
from course.llm.connection import (ENV_BASE_URL, ENV_KEY, ENV_MODEL, client, default_server,
                                   model_name, provider_configured, serve, using_real_provider)

__all__ = [
    "ENV_BASE_URL", "ENV_KEY", "ENV_MODEL", "MODEL_NAME", "SMALL_WINDOW_MODEL", "Target",
    "announce", "client", "default_server", "explain", "fresh_targets", "model_name", "model_table",
    "provider_configured", "rule_table", "serve", "targets", "using_real_provider",
]
