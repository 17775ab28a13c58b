"""Running a session: requests sent one after another in one conversation, the tool calls run
by a `ToolRun`, every completion's usage recorded as a `Step`; `try_session` for a provider's
model, whose replies are not trusted."""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from course import tracing
from lesson_support.skills.harness import SKILL_TOOLS, ToolRun
from lesson_support.skills.model_calls import ask, usage_of


@dataclass
class Step:
    request: int          # which request of the session (1-based)
    tools: int            # how many tools the call offered (the list only grows: run.tools[:tools])
    prompt_tokens: int | None
    cached_tokens: int | None  # None: not reported by the provider
    calls: list           # [(name, args)]
    answer: str | None
    completion: object    # the raw completion, for course.llm.explain


PROVIDER_MAX_CALLS = 8  # replies per request on a provider: a bounded, cheap demonstration


def _arguments(raw: str | None) -> dict:
    """A tool call's arguments as a dict; a model's malformed JSON is kept, not raised."""
    try:
        args = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {"unparsed arguments": raw}
    return args if isinstance(args, dict) else {"arguments": args}


def session_steps(client, model: str, requests: list[str], messages: list[dict],
                  tools: list[dict], run: ToolRun | None = None, max_calls: int = 12, **extra):
    """The steps of `run_session`, one at a time, as each completion arrives."""
    run = run or ToolRun()
    if run.tools is None:
        run.tools = list(tools)
    for number, request in enumerate(requests, 1):
        messages.append({"role": "user", "content": request})
        for _ in range(max_calls):
            completion = ask(client, model, messages, run.tools, **extra)
            message = completion.choices[0].message
            prompt, cached = usage_of(completion)
            calls = [(c.function.name, _arguments(c.function.arguments))
                     for c in message.tool_calls or ()]
            yield Step(number, len(run.tools), prompt, cached, calls, message.content, completion)
            if not message.tool_calls:
                messages.append({"role": "assistant", "content": message.content})
                break
            messages.append({"role": "assistant", "content": message.content, "tool_calls": [
                {"id": c.id, "type": "function",
                 "function": {"name": c.function.name, "arguments": c.function.arguments}}
                for c in message.tool_calls]})
            for c, (name, args) in zip(message.tool_calls, calls):
                result = {"role": "tool", "tool_call_id": c.id, "content": run(name, args)}
                if name in SKILL_TOOLS:  # a skill's body or file: the trace's "skills" part
                    tracing.tag("skills", result)
                messages.append(result)


def run_session(client, model: str, requests: list[str], messages: list[dict],
                tools: list[dict], run: ToolRun | None = None, max_calls: int = 12,
                **extra) -> list[Step]:
    """Send each request in turn as a user message of one conversation (`messages` grows in
    place), run the tool calls with `run`, and record every completion's usage. When `run`
    holds a tool list (tool search), the next request uses it. At most `max_calls` replies per
    request; `extra` goes into every request."""
    return list(session_steps(client, model, requests, messages, tools, run, max_calls, **extra))


def try_session(client, model: str, requests: list[str], messages: list[dict],
                tools: list[dict], run: ToolRun | None = None,
                max_calls: int = PROVIDER_MAX_CALLS) -> tuple[list[Step], str | None]:
    """`run_session` for a model whose choices are not known in advance (your provider): the
    steps it got through, and the error that stopped it (a refusal with an error status, a
    request the server does not accept), or None. A copy of `messages` is used."""
    import openai

    steps = []
    try:
        for step in session_steps(client, model, requests, copy.deepcopy(messages), tools, run,
                                  max_calls):
            steps.append(step)
    except openai.APIError as exc:
        return steps, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return steps, None
