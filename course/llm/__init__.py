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

import os
import threading

from course.llm.explain import explain  # noqa: F401
from course.llm.policy import rule_table  # noqa: F401
from course.llm.models import MODELS, REASONER, SMALL_WINDOW_MODEL, model_table  # noqa: F401
from course.llm.server import MODEL_NAME, ServerHandle, TeachingModel  # noqa: F401
from course.llm.measuring import Target, announce, fresh_targets, targets  # noqa: F401

ENV_KEY, ENV_BASE_URL, ENV_MODEL = "COURSE_LLM_API_KEY", "COURSE_LLM_BASE_URL", "COURSE_LLM_MODEL"

_default: ServerHandle | None = None
_lock = threading.Lock()


def using_real_provider() -> bool:
    return bool(os.environ.get(ENV_KEY))


def provider_configured() -> bool:
    """True when a real provider is configured (COURSE_LLM_API_KEY is set): then `client()`
    reaches it, and an experiment that needs the teaching model's private cache can run the
    same requests on the provider too. Read at call time, so a changed environment counts."""
    return using_real_provider()


def model_name() -> str:
    if using_real_provider():
        name = os.environ.get(ENV_MODEL)
        if not name:
            raise RuntimeError(f"{ENV_KEY} is set, so the course uses a real provider, but "
                               f"{ENV_MODEL} is not: set it to the model to call.")
        return name
    return MODEL_NAME


def serve(port: int = 0) -> ServerHandle:
    """Start a private teaching model on 127.0.0.1 (port 0 picks a free one)."""
    return ServerHandle(port=port)


def default_server() -> ServerHandle:
    """The process-wide teaching model, started once, on first use."""
    global _default
    with _lock:
        if _default is None:
            _default = serve()
        return _default


def client(**kwargs):
    """An `openai.OpenAI` client: the real provider if configured, else the teaching model."""
    if using_real_provider():
        import openai

        model_name()  # fail early and clearly if the model is not named
        return openai.OpenAI(api_key=os.environ[ENV_KEY],
                             base_url=os.environ.get(ENV_BASE_URL) or None, **kwargs)
    return default_server().client(**kwargs)
