"""A chat completion as the stream of `chat.completion.chunk`s a provider sends for `stream=True`.

The teaching model computes the whole reply first (it is a pure function of the request), then
cuts it the way a provider's stream arrives: the role, the text about one token per chunk, each
tool call announced (index, id, name) and its arguments in pieces of a few tokens, one chunk with
the `finish_reason`, and with `stream_options={"include_usage": true}` a last chunk with no
choices and the usage (every earlier chunk then says `"usage": null`). Concatenating the deltas
gives the non-streamed reply to the same request, exactly. The server sends each chunk as one
Server-Sent Event (`data: {...}`) and ends with `data: [DONE]`.

The chunk with the `finish_reason` also carries the teaching model's extra fields:
`teaching_trace`, `teaching_timing` (timing.py), and `context_management` when the request asked
for context editing
(context_editing.py; Anthropic's stream sends it at the end too, in `message_delta`).
"""
from __future__ import annotations

from course.llm.template import encoding

ARGUMENT_PIECE_TOKENS = 4  # tokens of a tool call's arguments per chunk


def token_pieces(text: str, per_piece: int = 1) -> list[str]:
    """`text` cut into pieces of about `per_piece` tokens each, never inside a character (a
    token that ends mid-character waits for the next). The pieces join back to `text`."""
    enc = encoding()
    pieces, pending, count = [], b"", 0
    for token in enc.encode_ordinary(text):
        pending += enc.decode_single_token_bytes(token)
        count += 1
        if count < per_piece:
            continue
        try:
            pieces.append(pending.decode("utf-8"))
        except UnicodeDecodeError:
            continue  # a character split across tokens: wait for its last byte
        pending, count = b"", 0
    if pending:
        pieces.append(pending.decode("utf-8", "replace"))
    return pieces


def chat_chunks(payload: dict, body: dict) -> list[dict]:
    """The chunks of the completion `payload`, streamed as the request `body` asked."""
    options = body.get("stream_options") or {}
    with_usage = bool(options.get("include_usage"))
    choice = payload["choices"][0]
    message = choice["message"]

    def chunk(delta: dict, finish: str | None = None) -> dict:
        out = {"id": payload["id"], "object": "chat.completion.chunk",
               "created": payload["created"], "model": payload["model"],
               "system_fingerprint": payload["system_fingerprint"],
               "choices": [{"index": 0, "delta": delta, "logprobs": None,
                            "finish_reason": finish}]}
        if with_usage:
            out["usage"] = None
        return out

    # The first chunk names the role; its content is "" when text follows, null when it does not.
    chunks = [chunk({"role": "assistant", "content": "" if message.get("content") else None})]
    if message.get("reasoning_content"):
        chunks += [chunk({"reasoning_content": piece})
                   for piece in token_pieces(message["reasoning_content"])]
    if message.get("content"):
        chunks += [chunk({"content": piece}) for piece in token_pieces(message["content"])]
    for index, call in enumerate(message.get("tool_calls") or []):
        chunks.append(chunk({"tool_calls": [{
            "index": index, "id": call["id"], "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""}}]}))
        chunks += [chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                   for piece in token_pieces(call["function"]["arguments"], ARGUMENT_PIECE_TOKENS)]
    last = chunk({}, choice["finish_reason"])
    # Not part of the OpenAI API: why the teaching model replied so (course.llm.explain).
    last["teaching_trace"] = payload["teaching_trace"]
    if "teaching_timing" in payload:  # the time a real deployment would take (timing.py)
        last["teaching_timing"] = payload["teaching_timing"]
    if "context_management" in payload:  # simulated from Anthropic's API (context_editing.py)
        last["context_management"] = payload["context_management"]
    chunks.append(last)
    if with_usage:
        usage = {k: v for k, v in chunk({}).items() if k != "choices"}
        chunks.append({**usage, "choices": [], "usage": payload["usage"]})
    return chunks
