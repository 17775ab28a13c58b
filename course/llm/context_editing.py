"""Context editing, Anthropic-style, simulated on Chat Completions: old tool results cleared by
the server before the model reads the request.

Anthropic's Messages API (beta header `context-management-2025-06-27`) lets a request carry
`context_management` with a list of edits; the edit `clear_tool_uses_20250919` replaces the
oldest tool results with a placeholder once the prompt grows past a trigger, and the response
says what was cleared. OpenAI's Chat Completions has no such field. The teaching model accepts
it there anyway (the openai SDK sends it with `extra_body=`), so a lesson can watch the feature
work on the course's one API:

    completion = client.chat.completions.create(model=..., messages=..., tools=..., extra_body={
        "context_management": {"edits": [{
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 30000},       # default 100,000
            "keep": {"type": "tool_uses", "value": 3},                  # default 3
            "clear_at_least": {"type": "input_tokens", "value": 5000},  # default: any amount
            "exclude_tools": ["web_search"],                            # default: none
            "clear_tool_inputs": False}]}})                             # default: false
    completion.model_extra["context_management"]
    -> {"applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 8,
                           "cleared_input_tokens": 50000}]}

What the simulation does:
  - A tool use is one call in an assistant message's `tool_calls` with its tool message; uses
    are ordered by their calls (message order, then position in `tool_calls`).
  - When the prompt's input tokens, counted as `usage.prompt_tokens` counts them (template.py),
    exceed the trigger, every tool use but the last `keep` and those of `exclude_tools` is
    cleared: its tool message's content becomes PLACEHOLDER (the message stays, so the call
    still has its answer) and, with `clear_tool_inputs`, the call's arguments become "{}" (the
    call stays). A part no longer than its replacement is left whole: clearing it frees nothing.
  - If that would free fewer than `clear_at_least` tokens, nothing is cleared.
  - Edits run in the order given, each on the messages the one before left; `applied_edits`
    lists those that cleared something ([] when none did).
  - The rules, the context window, `usage`, the prompt cache and the reply's id all see the
    edited messages: `prompt_tokens` is the count before minus `cleared_input_tokens`, and the
    cache misses from the first cleared message on; a prompt over the model's window that the
    edit brings under it is served (the edit runs first). A cleared result is no longer memory: a
    request that needs it again makes the call again. The trace gets a step `context_editing`.
  - The reply carries `context_management` when the request did; a streamed reply carries it on
    the chunk with the `finish_reason` (as Anthropic's stream sends it in `message_delta`).
  - Anything malformed is an HTTP 400 naming the field.

What the real feature does that this does not: it runs on Anthropic's Messages API (tool
results are `tool_result` blocks in user turns) and counts with Claude's tokenizer; its trigger
may also count tool uses, `clear_tool_inputs` may list tool names, and `clear_thinking_20251015`
clears old thinking blocks. Its placeholder text is Anthropic's own. Only clear_tool_uses_20250919
with input_tokens triggers and a boolean clear_tool_inputs is simulated here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from course.llm.validation import RequestError, expect_type

EDIT_TYPE = "clear_tool_uses_20250919"
PLACEHOLDER = "[tool result cleared by context management]"
CLEARED_INPUT = "{}"
FIELD = "context_management"
NAMED_IN_TRACE = 10  # cleared tool uses the trace names one by one
EDIT_KEYS = {"type", "trigger", "keep", "clear_at_least", "exclude_tools", "clear_tool_inputs"}


@dataclass(frozen=True)
class ClearToolUses:
    trigger: int = 100_000        # input tokens (Anthropic's default)
    keep: int = 3                 # the last N tool uses stay whole
    clear_at_least: int = 0       # input tokens; 0: any amount is worth clearing
    exclude_tools: tuple[str, ...] = ()
    clear_tool_inputs: bool = False


# ------------------------------------------------------------------ reading the options

def _invalid(param: str, why: str) -> RequestError:
    return RequestError(f"Invalid value for '{param}': {why}", param, "invalid_value")


def _known_keys(value: dict, allowed: set[str], param: str) -> None:
    for key in value:
        if key not in allowed:
            raise RequestError(f"Unknown parameter: '{param}.{key}'. Supported: "
                               f"{', '.join(sorted(allowed))}.", f"{param}.{key}", "unknown_parameter")


def _count(value, param: str, kind: str) -> int:
    """A {"type": kind, "value": N} object with N a non-negative integer."""
    expect_type(value, (dict,), param, "an object")
    _known_keys(value, {"type", "value"}, param)
    if value.get("type") != kind:
        raise _invalid(f"{param}.type", f"expected '{kind}', got {value.get('type')!r}"
                       + (" (the teaching model simulates only input_tokens triggers)"
                          if param.endswith("trigger") else "") + ".")
    if "value" not in value:
        raise RequestError(f"Missing required parameter: '{param}.value'.", f"{param}.value",
                           "missing_required_parameter")
    expect_type(value["value"], (int,), f"{param}.value", "an integer")
    if value["value"] < 0:
        raise _invalid(f"{param}.value", f"must be at least 0, got {value['value']}.")
    return value["value"]


def _edit(edit, param: str) -> ClearToolUses:
    expect_type(edit, (dict,), param, "an object")
    if edit.get("type") != EDIT_TYPE:
        raise _invalid(f"{param}.type", f"{edit.get('type')!r} is not an edit the teaching model "
                                        f"simulates; supported: '{EDIT_TYPE}'.")
    _known_keys(edit, EDIT_KEYS, param)
    options = {}
    for key, kind in (("trigger", "input_tokens"), ("keep", "tool_uses"),
                      ("clear_at_least", "input_tokens")):
        if edit.get(key) is not None:
            options[key] = _count(edit[key], f"{param}.{key}", kind)
    if edit.get("exclude_tools") is not None:
        names = edit["exclude_tools"]
        expect_type(names, (list,), f"{param}.exclude_tools", "an array of tool names")
        for j, name in enumerate(names):
            expect_type(name, (str,), f"{param}.exclude_tools[{j}]", "a string")
        options["exclude_tools"] = tuple(names)
    if edit.get("clear_tool_inputs") is not None:
        expect_type(edit["clear_tool_inputs"], (bool,), f"{param}.clear_tool_inputs", "a boolean")
        options["clear_tool_inputs"] = edit["clear_tool_inputs"]
    return ClearToolUses(**options)


def parse_context_management(value) -> list[ClearToolUses] | None:
    """The edits a request's `context_management` asks for (None when it has none); a
    RequestError (HTTP 400) naming the field when it is malformed."""
    if value is None:
        return None
    expect_type(value, (dict,), FIELD, "an object")
    _known_keys(value, {"edits"}, FIELD)
    if "edits" not in value:
        raise RequestError(f"Missing required parameter: '{FIELD}.edits'.", f"{FIELD}.edits",
                           "missing_required_parameter")
    expect_type(value["edits"], (list,), f"{FIELD}.edits", "an array")
    return [_edit(edit, f"{FIELD}.edits[{i}]") for i, edit in enumerate(value["edits"])]


# ------------------------------------------------------------------ applying them

@dataclass(frozen=True)
class ToolUse:
    call_index: int       # the assistant message that made the call
    position: int         # the call's place in that message's tool_calls
    result_index: int     # its tool message
    id: str
    name: str


def tool_uses(messages: list[dict]) -> list[ToolUse]:
    """Every call that has a tool message, oldest call first. A tool message answers the
    latest earlier call with its id that is still unanswered (validation has made ids unique;
    this keeps a reused one from pairing twice)."""
    pending: dict[str, tuple[int, int, str]] = {}
    uses = []
    for i, message in enumerate(messages):
        if message.get("role") == "assistant":
            for j, call in enumerate(message.get("tool_calls") or ()):
                pending[call["id"]] = (i, j, call["function"]["name"])
        elif message.get("role") == "tool" and message.get("tool_call_id") in pending:
            call_index, position, name = pending.pop(message["tool_call_id"])
            uses.append(ToolUse(call_index, position, i, message["tool_call_id"], name))
    return sorted(uses, key=lambda u: (u.call_index, u.position))


@dataclass
class Outcome:
    messages: list[dict]            # the edited messages (the request's own are never changed)
    applied_edits: list[dict]       # the response's context_management.applied_edits
    steps: list[dict]               # trace steps {"rule", "why", "evidence"}


def apply_edits(messages: list[dict], edits: list[ClearToolUses], fixed_tokens: int,
                message_tokens: Callable[[dict], int]) -> Outcome:
    """Apply the edits in order. `message_tokens(m)` is what message m adds to the prompt and
    `fixed_tokens` what the rest does (tools block, reply primer): the prompt is additive in
    its messages, so the tokens freed are exact."""
    applied, steps = [], []
    for edit in edits:
        messages, record, step = _clear_tool_uses(messages, edit, fixed_tokens, message_tokens)
        if record is not None:
            applied.append(record)
        steps.append(step)
    return Outcome(messages, applied, steps)


def _clear_tool_uses(messages, edit: ClearToolUses, fixed_tokens, message_tokens):
    total = fixed_tokens + sum(message_tokens(m) for m in messages)
    if total <= edit.trigger:
        return messages, None, _step(f"the prompt holds {total} input tokens, not over the "
                                     f"trigger of {edit.trigger}: nothing cleared")
    uses = tool_uses(messages)
    old = uses[: max(len(uses) - edit.keep, 0)]
    candidates = [u for u in old if u.name not in edit.exclude_tools]
    edited = list(messages)  # changed messages are new dicts: the request's stay as sent
    cleared, freed = [], 0
    for use in candidates:
        gain = _clear_result(edited, use.result_index, message_tokens)
        if edit.clear_tool_inputs:
            gain += _clear_input(edited, use, message_tokens)
        if gain:
            cleared.append(use)
            freed += gain
    excluded, last = len(old) - len(candidates), min(edit.keep, len(uses))
    kept = ((f"the last {last} tool use{'s' * (last != 1)} kept" if last else "no tool use kept")
            + (f", {excluded} of excluded tools kept" if excluded else ""))
    if not cleared:
        return messages, None, _step(f"the prompt holds {total} input tokens, over the trigger of "
                                     f"{edit.trigger}, but no older tool result is worth clearing "
                                     f"({kept}): nothing cleared")
    if freed < edit.clear_at_least:
        return messages, None, _step(
            f"the prompt holds {total} input tokens, over the trigger of {edit.trigger}; clearing "
            f"{len(cleared)} tool use{'s' * (len(cleared) != 1)} would free only {freed}, fewer "
            f"than clear_at_least {edit.clear_at_least}: nothing cleared")
    names = ", ".join(f"{u.name} {u.id}" for u in cleared[:NAMED_IN_TRACE])
    if len(cleared) > NAMED_IN_TRACE:  # a long run would drown the trace
        names += f" and {len(cleared) - NAMED_IN_TRACE} more"
    what = "results and inputs" if edit.clear_tool_inputs else "results"
    step = _step(f"the prompt holds {total} input tokens, over the trigger of {edit.trigger}: "
                 f"cleared the {what} of {len(cleared)} tool use{'s' * (len(cleared) != 1)} "
                 f"({names}), freeing {freed} tokens; {kept}",
                 sorted({u.result_index for u in cleared} | ({u.call_index for u in cleared}
                                                               if edit.clear_tool_inputs else set())))
    record = {"type": EDIT_TYPE, "cleared_tool_uses": len(cleared), "cleared_input_tokens": freed}
    return edited, record, step


def _step(why: str, evidence=()) -> dict:
    return {"rule": "context_editing", "why": why, "evidence": list(evidence)}


def _clear_result(edited, i, message_tokens) -> int:
    """Replace tool message i's content with the placeholder if that makes it shorter; the
    tokens freed."""
    before = message_tokens(edited[i])
    candidate = {**edited[i], "content": PLACEHOLDER}
    gain = before - message_tokens(candidate)
    if gain <= 0:
        return 0
    edited[i] = candidate
    return gain


def _clear_input(edited, use: ToolUse, message_tokens) -> int:
    """Replace the call's arguments with "{}" if that makes its message shorter; the tokens
    freed. Counted on the whole message, before and after, so the sum over calls is exact."""
    message = edited[use.call_index]
    before = message_tokens(message)
    calls = list(message["tool_calls"])
    call = calls[use.position]
    calls[use.position] = {**call, "function": {**call["function"], "arguments": CLEARED_INPUT}}
    candidate = {**message, "tool_calls": calls}
    gain = before - message_tokens(candidate)
    if gain <= 0:
        return 0
    edited[use.call_index] = candidate
    return gain
