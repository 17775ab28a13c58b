"""`explain(completion)`: why the teaching model replied as it did, in words for a student.

The teaching model adds one field to every reply that no real provider sends: `teaching_trace`,
a list of steps `{"rule", "why", "evidence"}` (evidence: indices into the request's messages).
The `openai` SDK keeps unknown fields, so it is `completion.model_extra["teaching_trace"]`.
A step of rule `sampling` (a request that sets temperature, top_p or seed: course/llm/sampling.py)
also carries `draw`: the candidates `[name, score, probability]`, the draw `u` and the `chosen`.
A step of rule `reasoning` (a reasoning model: course/llm/reasoning.py) names the model's history
policy and which earlier messages' reasoning the prompt holds or dropped; the reply's
`reasoning_content` is the trace's other steps in words.
A real model cannot tell you why it chose its reply; this trace exists only because the
teaching model is a list of rules (see course/llm/policy.py).
"""
from __future__ import annotations

import textwrap

SIMULATION = ("This trace comes from the course's teaching model, a rule-based simulation. A real "
              "provider returns no trace: its reasons are not available to you.")
NO_TRACE = ("This completion carries no teaching_trace, so it did not come from the course's "
            "teaching model (a real provider, for example). Real providers do not say why a model "
            "replied as it did: judge it by its output and by what you put in its context.")


class Explanation:
    """The rendered trace; prints as text, and shows as text at the end of a notebook cell."""

    def __init__(self, text: str, steps: list[dict]):
        self.text, self.steps = text, steps

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


def trace_of(completion) -> list[dict] | None:
    """The teaching_trace of a completion (an SDK object or a plain dict), or None."""
    if isinstance(completion, dict):
        trace = completion.get("teaching_trace")
    else:
        extra = getattr(completion, "model_extra", None) or {}
        trace = extra.get("teaching_trace") if isinstance(extra, dict) else None
    return trace if isinstance(trace, list) else None


def _reply_line(completion) -> str | None:
    try:
        if isinstance(completion, dict):
            message = completion["choices"][0]["message"]
            calls = message.get("tool_calls") or []
            names = [c["function"]["name"] for c in calls]
            content = message.get("content")
        else:
            message = completion.choices[0].message
            names = [c.function.name for c in message.tool_calls or []]
            content = message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        return None
    if names:
        return "reply: tool calls " + ", ".join(names)
    first = (content or "").strip().splitlines()[0] if (content or "").strip() else ""
    return "reply: text" + (f' ("{first[:70]}{"..." if len(first) > 70 else ""}")' if first else "")


WINDOW = ("Every teaching-model name has a context window (course.llm.model_table()): a request "
          "over it, its prompt plus max_tokens when given, is refused before any rule runs, as "
          "OpenAI refuses it.")


def _refusal(error) -> str | None:
    """What a refused request says: an `openai.APIStatusError` carries the error body."""
    status, body = getattr(error, "status_code", None), getattr(error, "body", None)
    if not isinstance(status, int) or not isinstance(body, dict):
        return None
    text = (f"The request was refused (HTTP {status}, code {body.get('code')}), so no rule "
            f"decided a reply: {body.get('message')}")
    return text + (" " + WINDOW if body.get("code") == "context_length_exceeded" else "")


def explain(completion, width: int = 96) -> Explanation:
    """Render a completion's teaching_trace for a student (or say plainly that there is none).
    Given the SDK's error for a refused request (openai.BadRequestError), say why it was
    refused."""
    refused = _refusal(completion)
    if refused is not None:
        return Explanation(textwrap.fill(refused, width), [])
    trace = trace_of(completion)
    if not trace:
        return Explanation(NO_TRACE, [])
    lines = ["How the teaching model decided:"]
    for n, step in enumerate(trace, 1):
        rule = str(step.get("rule", "?"))
        why = str(step.get("why", ""))
        evidence = step.get("evidence") or []
        where = f" [messages {', '.join(map(str, evidence))}]" if evidence else ""
        head = f"{n:>2}. {rule:<17} "
        lines += textwrap.wrap(why + where, width, initial_indent=head,
                               subsequent_indent=" " * len(head)) or [head]
    reply = _reply_line(completion)
    if reply:
        lines.append(reply)
    lines.append(textwrap.fill(SIMULATION, width))
    return Explanation("\n".join(lines), trace)
