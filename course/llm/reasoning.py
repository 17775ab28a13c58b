"""Reasoning models, simulated: `reasoning_content` before the reply, and what each model family
does with the reasoning of earlier turns (its history policy).

A reasoning model writes its thinking before its answer. In the raw token stream the order is
fixed: `<think>` ... `</think>`, then the text, then the tool calls (the textbook's part 3). An
OpenAI-compatible API hands the thinking over as a field of its own; the teaching model uses
DeepSeek's, `reasoning_content`, on the message and in stream deltas (before any text or call
delta). The teaching model has no thoughts: its reasoning is its decision's trace in words
(`reasoning_text`): each step of `teaching_trace` (what the rules looked at, what they found),
then what it chose. So the reasoning of a reply is as deterministic as the reply.

The reasoning models (course/llm/models.py; `GET /v1/models` lists each with `history_policy`):

    teaching-reasoner-strip            strip             DeepSeek R1
    teaching-reasoner-pass-back        pass_back         DeepSeek V4, Kimi K2, GLM-5
    teaching-reasoner-since-last-user  since_last_user   Qwen3's chat template

What each history policy means for a request's earlier assistant messages:

  - strip: reasoning from earlier turns is not part of the prompt. Sending `reasoning_content`
    back in a message is an HTTP 400 naming `messages[i].reasoning_content`, as DeepSeek R1's API
    refused it: send `content` (and `tool_calls`) only.
  - pass_back: every assistant message's `reasoning_content` sent back is rendered into the
    prompt; an assistant message with `tool_calls` that lacks it (missing or null) is an HTTP 400
    naming `messages[i].reasoning_content`, as DeepSeek V4, Kimi K2 and GLM-5 refuse it in a tool
    loop: the model needs its own reasoning to carry on.
  - since_last_user: reasoning is rendered only for the assistant messages after the last real
    user message; earlier turns' reasoning is accepted and dropped from the prompt, as Qwen3's
    template does. A "real" user message is one that is not a tool result sent as a user turn (its
    whole text inside `<tool_response>` ... `</tool_response>`, Qwen3's wrapping): such a message
    does not reset the reasoning, a plain user message does. So the prompt after a new user
    message no longer holds the earlier thinking: `prompt_tokens` falls, and the prefix cache
    misses from the first assistant message whose thinking was dropped.

For all three, `reasoning_content` must be a string or null (else a 400 naming the field).
Models that do not reason ignore a `reasoning_content` sent back, as before.

The template (course/llm/template.py) renders rendered reasoning exactly: an assistant message
with reasoning in the prompt is <|im_start|> "assistant\\n" THINK BODY <|im_end|> "\\n", where
THINK = "<think>\\n" + reasoning + "\\n</think>\\n\\n" is encoded on its own (so is "assistant\\n",
and BODY), and a reply is billed THINK + BODY + <|im_end|>: `completion_tokens` includes the
reasoning, and `usage.completion_tokens_details.reasoning_tokens` is exactly the tokens of THINK.
An assistant message whose reasoning is not rendered is the ordinary one-piece message. Because
THINK and BODY follow "assistant\\n" as separate pieces, a reply sent back under pass_back extends
the prompt it answered token for token: the next request's cache hit covers all of it.

A reply cut by max_tokens (or by the window) is cut in the order it is written: the reasoning
first, then the text; tool calls are withheld. The trace gets a step `reasoning` naming the
policy, which messages' reasoning the prompt holds or dropped, and the reply's reasoning tokens.

What real models do differently: their thinking is sampled text, often long, not a trace; R1
also ignores reasoning sent as text inside `content`; V4 in non-thinking mode and Claude differ
(Claude's thinking blocks are signed and must come back unchanged inside a tool loop, and old
ones are ignored after a new user turn); a real Qwen3 template also renders an empty think block
in some versions. The policies here are each family's documented rule, nothing more.
"""
from __future__ import annotations

import json

from course.llm.validation import RequestError, expect_type

STRIP, PASS_BACK, SINCE_LAST_USER = "strip", "pass_back", "since_last_user"
POLICIES = (STRIP, PASS_BACK, SINCE_LAST_USER)
POLICY_RULES = {
    STRIP: "earlier reasoning is not part of the prompt; reasoning_content sent back is a 400 "
           "(DeepSeek R1)",
    PASS_BACK: "every reasoning_content sent back is in the prompt; an assistant message with "
               "tool_calls that lacks it is a 400 (DeepSeek V4, Kimi K2, GLM-5)",
    SINCE_LAST_USER: "reasoning after the last real user message is in the prompt, earlier "
                     "reasoning is dropped (Qwen3's template)",
}
THINK_OPEN, THINK_CLOSE = "<think>\n", "\n</think>\n\n"
FIELD = "reasoning_content"


def think_text(reasoning: str) -> str:
    """THINK: the reasoning as the template renders it, before the reply's text."""
    return THINK_OPEN + reasoning + THINK_CLOSE


def is_tool_response(message: dict) -> bool:
    """A user message that is a tool result in Qwen3's wrapping, not something a person wrote."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content
                          if isinstance(p, dict) and p.get("type") == "text")
    text = content.strip() if isinstance(content, str) else ""
    return text.startswith("<tool_response>") and text.endswith("</tool_response>")


def last_real_user(messages: list) -> int:
    """Index of the last user message that is not a wrapped tool result; -1 if none."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user" and not is_tool_response(messages[i]):
            return i
    return -1


def rendered(messages: list, policy: str) -> list[bool]:
    """For each message: is its reasoning part of the prompt under `policy`?"""
    since = last_real_user(messages) if policy == SINCE_LAST_USER else -1
    return [policy != STRIP and m.get("role") == "assistant" and isinstance(m.get(FIELD), str)
            and i > since for i, m in enumerate(messages)]


def prompt_view(messages: list, policy: str) -> list:
    """The messages as the model reads them under `policy`: `reasoning_content` kept where it is
    rendered, removed elsewhere (a message is copied only when it changes)."""
    keep = rendered(messages, policy)
    return [m if keep[i] or FIELD not in m else {k: v for k, v in m.items() if k != FIELD}
            for i, m in enumerate(messages)]


def check_history(messages: list, policy: str) -> None:
    """The policy's 400s (call after validate_request)."""
    for i, message in enumerate(messages):
        param = f"messages[{i}].{FIELD}"
        value = message.get(FIELD)
        if value is not None:
            expect_type(value, (str,), param, "a string")
        if value is not None and message.get("role") != "assistant":
            raise RequestError(f"Invalid parameter: '{param}': only messages with role "
                               f"'assistant' can carry reasoning_content, this one has role "
                               f"{message.get('role')!r}.", param, "invalid_value")
        if policy == STRIP and value is not None:
            raise RequestError(
                f"Invalid parameter: '{param}'. This model (history policy strip, like DeepSeek "
                f"R1) does not take reasoning_content in input messages: the reasoning of "
                f"earlier turns is not part of the prompt. Send the assistant message's content "
                f"and tool_calls only.", param, "reasoning_content_not_allowed")
        if (policy == PASS_BACK and message.get("role") == "assistant"
                and message.get("tool_calls") and value is None):
            raise RequestError(
                f"Missing 'reasoning_content' in messages[{i}]: this model (history policy "
                f"pass_back, like DeepSeek V4, Kimi K2 and GLM-5) needs every assistant message "
                f"with tool_calls sent back with the reasoning_content it was returned with.",
                param, "missing_reasoning_content")


def _decided(reply: dict) -> str:
    calls = reply.get("tool_calls") or []
    if calls:
        shown = []
        for call in calls:
            fn = call["function"]
            try:
                args = json.loads(fn["arguments"])
                inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
            except (ValueError, AttributeError):
                inner = fn["arguments"]
            shown.append(f"{fn['name']}({inner})")
        return "So I call " + ", ".join(shown) + "."
    return "So I answer in text."


def reasoning_text(trace: list[dict], reply: dict) -> str:
    """The reasoning of a reply: each trace step in words, then what was chosen."""
    lines = [f"{step['rule']}: {step['why']}" for step in trace if step.get("rule") != "reasoning"]
    return "\n".join(lines + [_decided(reply)])


def history_step(messages: list, policy: str, think_tokens: int) -> dict:
    """The trace step `reasoning`: the policy, which messages' reasoning is in the prompt."""
    keep = rendered(messages, policy)
    kept = [i for i, k in enumerate(keep) if k]
    dropped = [i for i, m in enumerate(messages) if FIELD in m and m[FIELD] is not None and not keep[i]]

    def where(indices):
        return ", ".join(f"messages[{i}]" for i in indices)

    said = f"history policy {policy}: {POLICY_RULES[policy]}"
    if kept:
        said += f"; reasoning in the prompt: {where(kept)}"
    if dropped:
        since = last_real_user(messages)
        said += (f"; reasoning dropped (before the last real user message, messages[{since}]): "
                 f"{where(dropped)}")
    said += f"; this reply reasons in {think_tokens} tokens"
    return {"rule": "reasoning", "why": said, "evidence": kept + dropped}
