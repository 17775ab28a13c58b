"""Context editing done by the client (Chapter 14): Anthropic's `clear_tool_uses` edit, computed
before sending, and what an edit costs in cache.

`clear_tool_uses` gives the same messages the teaching model's server-side edit gives
(course.llm.context_editing; tests/solutions/test_provider_context.py checks it on generated
histories): once the prompt is over `trigger` tokens, the results of every tool use but the
last `keep` (and those of `exclude` tools) become the placeholder, unless that frees fewer than
`clear_at_least` tokens. The calls and their tool messages stay, so pairing holds.
"""
from __future__ import annotations

from course.givens.provider_context import PLACEHOLDER, fixed_tokens, message_tokens


def _uses(messages: list[dict]) -> list[tuple[int, int, str]]:
    """(call message, position, result message) of every answered call, oldest call first."""
    open_calls: dict[str, tuple[int, int, str]] = {}
    found = []
    for i, m in enumerate(messages):
        if m.get("role") == "assistant":
            for j, call in enumerate(m.get("tool_calls") or ()):
                open_calls[call["id"]] = (i, j, call["function"]["name"])
        elif m.get("role") == "tool" and m.get("tool_call_id") in open_calls:
            i_call, j, name = open_calls.pop(m["tool_call_id"])
            found.append((i_call, j, i, name))
    found.sort()
    return [(i_call, i_result, name) for i_call, _, i_result, name in found]


def clear_tool_uses(messages, trigger, keep=3, clear_at_least=0, exclude=(), tools=None):
    """The client-side clear_tool_uses edit. Returns {"messages": the edited copy (the input is
    not changed), "cleared_tool_uses": how many results were cleared, "cleared_input_tokens":
    the tokens that freed}. The prompt is measured as the teaching model bills it:
    fixed_tokens(tools) + message_tokens of each message."""
    total = fixed_tokens(tools) + sum(message_tokens(m) for m in messages)
    untouched = {"messages": list(messages), "cleared_tool_uses": 0, "cleared_input_tokens": 0}
    if total <= trigger:
        return untouched
    uses = _uses(messages)
    old = uses[: max(len(uses) - keep, 0)]
    edited, cleared, freed = list(messages), 0, 0
    for _, i, name in old:
        if name in exclude:
            continue
        candidate = {**edited[i], "content": PLACEHOLDER}
        gain = message_tokens(edited[i]) - message_tokens(candidate)
        if gain > 0:  # a result no longer than the placeholder is left whole
            edited[i] = candidate
            cleared += 1
            freed += gain
    if cleared == 0 or freed < clear_at_least:
        return untouched
    return {"messages": edited, "cleared_tool_uses": cleared, "cleared_input_tokens": freed}


def cache_loss(before, after):
    """Tokens of `before`'s cached prefix that `after` no longer shares: the tokens of `before`'s
    messages from the first one `after` changes (or lacks) to its end; 0 when `after` keeps every
    message of `before` unchanged (it may add more after them)."""
    for i, message in enumerate(before):
        if i >= len(after) or after[i] != message:
            return sum(message_tokens(m) for m in before[i:])
    return 0
