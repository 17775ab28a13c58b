"""The raw stream, timed: when each piece of a reply arrived, time to first token, decode speed.

Written against the smallest interface there is, an iterable of chunks, so the same function
times the course's server through the `openai` SDK (ChatCompletionChunk objects), llama_cpp's
own `create_chat_completion(stream=True)` / `create_completion(stream=True)` (dicts), or a
recorded list. A chunk's text is read by `chunk_text`; a final usage chunk (no text) is kept.

Time to first token (TTFT) is from the request to the first piece with text: it is the prefill
(reading the prompt) plus one decode step. Decode speed is the pieces after the first over the
time after the first, so prefill does not dilute it. llama.cpp sends one token a chunk; a server
that batches several tokens into a chunk makes "pieces" undercount tokens, which is why the
summary also reports `completion_tokens` from usage when the stream carried it.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from statistics import median


def _get(obj, name: str):
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def chunk_text(chunk) -> str:
    """The text a chunk carries: a chat delta's content (OpenAI or llama_cpp chat chunks) or a
    completion choice's text; "" for a chunk without any (the role chunk, the usage chunk)."""
    choices = _get(chunk, "choices") or []
    if not choices:
        return ""
    choice = choices[0]
    delta = _get(choice, "delta")
    if delta is not None:
        return _get(delta, "content") or ""
    return _get(choice, "text") or ""


def timed_stream(start_request: Callable[[], Iterable], clock: Callable[[], float] = time.perf_counter) -> dict:
    """Start a streamed request (`start_request()` returns the chunk iterable) and record, for
    every piece with text, the seconds since the call: {"pieces": [(seconds, text), ...],
    "usage": the last chunk's usage or None, "total_s"}. The clock is read before the request is
    made, so connection and queueing count in TTFT as a user would feel them."""
    started = clock()
    pieces, usage = [], None
    for chunk in start_request():
        now = clock() - started
        text = chunk_text(chunk)
        if text:
            pieces.append((now, text))
        chunk_usage = _get(chunk, "usage")
        if chunk_usage:
            usage = chunk_usage
    return {"pieces": pieces, "usage": usage, "total_s": clock() - started}


def stream_summary(record: dict) -> dict:
    """TTFT, decode pieces per second and the gaps between pieces (median, max) of one
    `timed_stream` record. None where a figure needs more pieces than arrived."""
    times = [t for t, _ in record["pieces"]]
    if not times:
        return {"pieces": 0, "ttft_s": None, "decode_pieces_per_s": None, "gap_median_s": None,
                "gap_max_s": None, "total_s": record["total_s"]}
    gaps = [b - a for a, b in zip(times, times[1:])]
    decode_span = times[-1] - times[0]
    return {"pieces": len(times), "ttft_s": times[0],
            "decode_pieces_per_s": (len(times) - 1) / decode_span if decode_span > 0 else None,
            "gap_median_s": median(gaps) if gaps else None, "gap_max_s": max(gaps) if gaps else None,
            "total_s": record["total_s"], "text": "".join(text for _, text in record["pieces"])}


def spread(values: Iterable[float]) -> dict:
    """{"n", "median", "min", "max", "q1", "q3"} of measured values (quartiles by the inclusive
    method, so they stay inside [min, max] for any n)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("spread() needs at least one value")
    n = len(ordered)

    def quantile(q: float) -> float:
        pos = q * (n - 1)
        low = int(pos)
        high = min(low + 1, n - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)

    return {"n": n, "median": median(ordered), "min": ordered[0], "max": ordered[-1],
            "q1": quantile(0.25), "q3": quantile(0.75)}
