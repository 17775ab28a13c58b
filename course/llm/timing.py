"""Simulated serving time: how long a real deployment would take to answer, from token counts.

The teaching model answers in milliseconds whatever the prompt, so it cannot show what a cache
miss costs in time. Every reply therefore carries, beside `teaching_trace`, one more field no
real provider sends, `teaching_timing` (`completion.model_extra["teaching_timing"]`):

    prefill_s               uncached prompt tokens / PREFILL_TOKENS_PER_S
                            + cached prompt tokens / CACHED_TOKENS_PER_S
    time_to_first_token_s   OVERHEAD_S + prefill_s + one decoded token
    decode_s                completion tokens / DECODE_TOKENS_PER_S
    total_s                 time_to_first_token_s + the rest of the decode

Prefill is compute-bound: every uncached token of the prompt goes through the whole model; a
cached token only has its keys and values loaded. The constants are one plausible deployment (a
mid-sized model on one accelerator, little batching), chosen so that the textbook's production
incident comes out at a customer-service agent's prompt size: a prompt of about 20,000 tokens
starts in about 0.5 s when its prefix is cached and in 3–5 s when a line such as
`Current time: {now}` at the top of the system prompt makes every request a miss. Real figures
depend on the hardware, the model, the batch and the provider; only the ratio is the lesson.
Nothing waits: the server answers at once and reports the time it would have taken.
"""
from __future__ import annotations

PREFILL_TOKENS_PER_S = 5_000    # uncached prompt tokens per second
CACHED_TOKENS_PER_S = 100_000   # cached prompt tokens per second (keys and values loaded)
DECODE_TOKENS_PER_S = 50        # generated tokens per second
OVERHEAD_S = 0.2                # network, queueing, scheduling


def simulated_timing(prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> dict:
    """The simulated seconds of one request (see the module docstring), rounded to the ms."""
    uncached = max(0, prompt_tokens - cached_tokens)
    prefill = uncached / PREFILL_TOKENS_PER_S + cached_tokens / CACHED_TOKENS_PER_S
    first = OVERHEAD_S + prefill + 1 / DECODE_TOKENS_PER_S
    total = first + max(0, completion_tokens - 1) / DECODE_TOKENS_PER_S
    return {"prefill_s": round(prefill, 3), "time_to_first_token_s": round(first, 3),
            "decode_s": round(completion_tokens / DECODE_TOKENS_PER_S, 3), "total_s": round(total, 3)}
