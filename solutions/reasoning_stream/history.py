"""What a client sends back of a reasoning model's earlier thinking: `history_for` (each history
policy's rule, every message and pairing kept, none of the policy's 400s) and `reasoning_budget`
(thinking question 2: the newest reasoning kept within a token budget, older reasoning replaced by
decision records)."""
from __future__ import annotations

from course.givens.reasoning_stream import (FIELD, PASS_BACK, POLICIES, STRIP, decision_record,
                                            last_real_user, think_tokens)


def _without(message: dict) -> dict:
    return {k: v for k, v in message.items() if k != FIELD} if FIELD in message else message


def history_for(policy: str, messages: list) -> list:
    """The messages to send to a reasoning model with history policy `policy`:

      - strip (DeepSeek R1): no message carries `reasoning_content`;
      - pass_back (DeepSeek V4, Kimi K2, GLM-5): every assistant message keeps its reasoning; one
        with `tool_calls` whose reasoning is missing (or not a string) gets "" (the model is told
        it has none, and the request is not refused);
      - since_last_user (Qwen3): reasoning only on the assistant messages after the last real user
        message (a user message that is a `<tool_response>` is not one); dropped before it, where
        the template would drop it anyway.

    Under every policy only assistant messages carry reasoning, and only as a string. The result
    has the same messages in the same order (content and tool calls untouched, so every call keeps
    its result); the input is not changed (a message is copied when it changes)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown history policy {policy!r}: expected one of {POLICIES}")
    since = last_real_user(messages)
    out = []
    for i, message in enumerate(messages):
        value = message.get(FIELD)
        assistant = message.get("role") == "assistant"
        if not assistant or policy == STRIP:
            out.append(_without(message))
        elif policy == PASS_BACK:
            if isinstance(value, str):
                out.append(message)
            elif message.get("tool_calls"):
                out.append({**message, FIELD: ""})
            else:
                out.append(_without(message))
        else:  # SINCE_LAST_USER
            out.append(message if isinstance(value, str) and i > since else _without(message))
    return out


def reasoning_budget(messages: list, limit: int) -> list:
    """Keep the newest reasoning whole within `limit` tokens (think_tokens of each message's
    reasoning, newest first, while the running total stays within the limit); from the first
    that does not fit, that message's and every older message's reasoning is replaced by its
    decision record (`decision_record`). Records are not counted against the limit. Messages
    without reasoning are unchanged; the input is not changed."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise ValueError(f"limit must be a number of tokens >= 0, got {limit!r}")
    out, used, full = list(messages), 0, False
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        value = message.get(FIELD)
        if message.get("role") != "assistant" or not isinstance(value, str):
            continue
        if not full and used + think_tokens(value) <= limit:
            used += think_tokens(value)
            continue
        full = True
        record = decision_record(value)
        if record != value:
            out[i] = {**message, FIELD: record}
    return out
