"""One request to a model through an `openai` client, and the usage figures it reports."""
from __future__ import annotations

from course.usage import read_usage


def usage_of(completion) -> tuple[int | None, int | None]:
    """(prompt_tokens, cached_tokens) of a completion, read by course.usage.read_usage: None
    where the provider does not report the figure (cached tokens on Ollama), never 0."""
    usage = read_usage(completion.usage)
    return usage.prompt, usage.cached


def ask(client, model: str, messages: list[dict], tools: list[dict] | None = None, **extra):
    kwargs = {"model": model, "messages": messages}
    if tools:
        kwargs["tools"] = tools
    kwargs.update(extra)
    return client.chat.completions.create(**kwargs)
