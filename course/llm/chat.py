"""The chat completion for a request body (`POST /v1/chat/completions`), as a pure function of
the body: validation (with a reasoning model's history policy: reasoning.py), context editing (context_editing.py, when the request asks for it), the
context window, the decision list (its choices drawn at the request's temperature and seed:
sampling.py), the reply (a reasoning model's reasoning first) and its usage. It runs in the server's thread or
in a worker process alike (server.py decides which)."""
from __future__ import annotations

import hashlib
import time
from array import array

from course.llm.context_editing import apply_edits, parse_context_management
from course.llm.models import model_spec, prompt_in_window
from course.llm.policy import decide, reply_message
from course.llm.reasoning import (THINK_OPEN, check_history, history_step, prompt_view,
                                  reasoning_text)
from course.llm.template import (completion_token_count, encoding, fixed_token_count,
                                 message_token_count, think_token_count)
from course.llm.validation import validate_request


def answer(body) -> tuple[dict, list[int]]:
    """The chat completion for a request body, with `cached_tokens` still 0, and the prompt's
    token ids (for the cache). A pure function of the body: it runs in any process."""
    validate_request(body)  # RequestError (HTTP 400) on a problem
    spec = model_spec(body["model"])
    policy = spec.reasoning  # None: a model that does not reason
    sent = body["messages"]
    if policy:
        check_history(body["messages"], policy)  # the history policy's 400s
        # the messages as the model reads them: reasoning kept only where the policy renders it
        body = {**body, "messages": prompt_view(body["messages"], policy)}
    edits = parse_context_management(body.get("context_management"))  # None: not asked for
    edited = None
    if edits is not None:
        # Server-side, before the model reads anything: every later step sees the edited messages.
        counted = ((lambda m: message_token_count(m, think=True)) if policy else message_token_count)
        edited = apply_edits(body["messages"], edits, fixed_token_count(body.get("tools")), counted)
        body = {**body, "messages": edited.messages}
    asked = body.get("max_completion_tokens") or body.get("max_tokens")
    # over the window: HTTP 400 context_length_exceeded, before any rule reads the request
    tokens = prompt_in_window(spec, body["messages"], body.get("tools"), asked)
    seed = hashlib.sha256(array("I", tokens).tobytes()).hexdigest()
    decision, ctx = decide(body, validated=True, prompt_hash=seed)
    if edited is not None:
        ctx.trace[1:1] = edited.steps  # right after "validation": it happened before any rule
    sampler = ctx.sampler
    if sampler.sampling:  # another draw is another reply: its ids differ too
        seed = hashlib.sha256(f"{seed}:{float(sampler.temperature)!r}:{float(sampler.top_p)!r}:"
                              f"{sampler.seed}".encode()).hexdigest()
    reply = reply_message(decision, ctx, seed)
    if policy:  # its reasoning comes first: the trace so far in words
        reply = {"role": "assistant", "reasoning_content": reasoning_text(ctx.trace, reply),
                 **{k: v for k, v in reply.items() if k != "role"}}
    completion = completion_token_count(reply, think=bool(policy))
    reasoning = think_token_count(reply) if policy else 0
    room = spec.context_window - len(tokens)
    limit = asked if asked is not None else room
    finish = "tool_calls" if reply.get("tool_calls") else "stop"
    if completion > limit:
        # Out of tokens mid-reply, as a provider would be: text is cut; tool calls that do
        # not fit are not sent at all (half a JSON argument is of no use to anyone).
        what = (f"max_tokens is {limit}" if asked is not None else
                f"the {spec.context_window}-token context window of {spec.name} leaves {room}")
        ctx.note("max_tokens" if asked is not None else "context_window",
                 f"the reply needs {completion} tokens, {what}: text cut, tool calls withheld")
        text = reply.get("content") or ""
        if policy and reasoning >= limit - 1:  # the reasoning fills the room: it is cut, no text
            opening = len(encoding().encode_ordinary(THINK_OPEN))
            reply = {"role": "assistant",
                     "reasoning_content": _cut(reply["reasoning_content"], limit - opening),
                     "content": None}
            reasoning = limit - 1
        elif policy:  # the reasoning whole, then the text cut in what is left
            kept = _cut(text, limit - reasoning) if text else ""
            reply = {"role": "assistant", "reasoning_content": reply["reasoning_content"],
                     "content": kept or None}
        else:
            reply = {"role": "assistant", "content": _cut(text, limit) if text else None}
        completion, finish = limit, "length"
    if policy:  # right after validation and any context edit: it is how the prompt was rendered
        ctx.trace.insert(1 + (len(edited.steps) if edited else 0),
                         history_step(sent, policy, reasoning))
    payload = {
        "id": "chatcmpl-" + seed[:24],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body["model"],
        "system_fingerprint": "teaching-model-1",
        "choices": [{"index": 0, "message": {"refusal": None, **reply},
                     "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": len(tokens),
            "completion_tokens": completion,
            "total_tokens": len(tokens) + completion,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0,
                                          "rejected_prediction_tokens": 0},
        },
        # Not part of the OpenAI API: why the teaching model replied so (course.llm.explain).
        # The SDK keeps unknown fields: completion.model_extra["teaching_trace"].
        "teaching_trace": ctx.trace,
    }
    if edited is not None:
        # Anthropic's field, simulated (context_editing.py): what the server cleared
        payload["context_management"] = {"applied_edits": edited.applied_edits}
    return payload, tokens


def _cut(text: str, limit: int) -> str:
    enc = encoding()
    # limit - 1 tokens of text plus the closing <|im_end|>; drop a trailing partial character
    return enc.decode_bytes(enc.encode_ordinary(text)[: max(limit - 1, 0)]).decode("utf-8", "ignore")
