"""A real model on your machine (Chapter 16): reading a timed stream, scoring a needle grid,
pricing a chat template's envelope.

    ttft_and_decode     a timed stream: time to first token, decode speed, and whether the
                        backend took the prompt's prefix from its cache
    needle_cells        independent pass-key trials grouped into (length, depth, distractors)
                        cells, each with successes of n and chapter 12's Wilson interval
    template_overhead   the tokens a chat template adds around the messages' contents
    self_test           the lab's self-test answers

The lesson's measuring library (lesson_support.real_model) summarises its grids and templates
with these functions. The chapter's givens (`course.givens.real_model`: the recorded
measurements, the sample conversation, a template renderer, the teaching model's timed stream)
are re-exported.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from course.givens.real_model import (RECORDED, SAMPLE_MESSAGES, recorded, render_template,
                                      timed_teaching_stream)
from solutions.evaluation.stats import wilson

# A prompt counts as taken from the cache when the backend reused at least this share of it: a
# cache miss still reuses the template's header (about 20 to 30 tokens on SmolLM2), a hit all
# but the last few tokens. Chapter 16's cache comparison uses the same half.
CACHED_SHARE = 0.5

__all__ = ["CACHED_SHARE", "RECORDED", "SAMPLE_MESSAGES", "needle_cells", "recorded",
           "render_template", "self_test", "template_overhead", "timed_teaching_stream",
           "ttft_and_decode"]


def ttft_and_decode(record: dict) -> dict:
    """TTFT, decode speed and cache use of one timed stream.

    `record` is {"pieces": [[seconds since the request, text], ...], "usage": the stream's usage
    or None}. Pieces without text do not count. Returns
    {"ttft_s": the first piece's time, "decode_tokens_per_s": the pieces after the first over
    the time after the first (one token a piece), "prompt_tokens", "cached_tokens" (None when
    the usage does not say), "cached": at least CACHED_SHARE of the prompt came from the cache
    (None when unknown)}. Figures that need more pieces than arrived are None."""
    times = [float(seconds) for seconds, text in record.get("pieces") or () if text]
    span = times[-1] - times[0] if times else 0.0
    usage = record.get("usage") or {}
    prompt = usage.get("prompt_tokens")
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    return {"ttft_s": times[0] if times else None,
            "decode_tokens_per_s": (len(times) - 1) / span if span > 0 else None,
            "prompt_tokens": prompt, "cached_tokens": cached,
            "cached": None if not prompt or cached is None else cached >= CACHED_SHARE * prompt}


def needle_cells(trials: Sequence[dict], level: float = 0.95) -> list[dict]:
    """Pass-key trials grouped by (distractors, length, depth), in that order: per cell
    {"distractors", "length", "depth", "n", "successes", "rate", "low", "high" (the Wilson
    interval at `level`), "took_decoy" (trials that answered a decoy key)}.

    Trials must be independent: two with the same seed share their key and filler (at
    temperature 0, one answer counted twice), so a repeated seed raises ValueError."""
    seen, groups = set(), {}
    for trial in trials:
        if trial["seed"] in seen:
            raise ValueError(f"trial seed {trial['seed']} appears twice: trials must be independent "
                             "(each its own key and filler)")
        seen.add(trial["seed"])
        groups.setdefault((trial["distractors"], trial["length"], trial["depth"]), []).append(trial)
    cells = []
    for (distractors, length, depth), these in sorted(groups.items()):
        successes = sum(bool(t["success"]) for t in these)
        low, high = wilson(successes, len(these), level)
        cells.append({"distractors": distractors, "length": length, "depth": depth, "n": len(these),
                      "successes": successes, "rate": successes / len(these), "low": low, "high": high,
                      "took_decoy": sum(bool(t.get("took_decoy")) for t in these)})
    return cells


def template_overhead(messages: Sequence[dict], render: Callable[[Sequence[dict]], str],
                      count: Callable[[str], int]) -> dict:
    """What the template adds around the contents: the rendered prompt's tokens minus the
    contents' own tokens, in total and per message. (Counting contents apart can differ by a
    token at a seam from counting them in place; the template's markers sit on the seams, so
    the difference is the envelope's.) Returns {"messages", "prompt_tokens", "content_tokens",
    "overhead_tokens", "overhead_per_message", "prompt": the rendered text}."""
    if not messages:
        raise ValueError("template_overhead needs at least one message")
    prompt = render(messages)
    total = count(prompt)
    contents = sum(count(m["content"]) for m in messages)
    return {"messages": len(messages), "prompt_tokens": total, "content_tokens": contents,
            "overhead_tokens": total - contents, "overhead_per_message": (total - contents) / len(messages),
            "prompt": prompt}


def self_test() -> dict:
    """The answers to lab 16's self-test (why each is right: docs/instructors/answer_key.md)."""
    return {"q1": "b", "q2": "a", "q3": "c", "q4": "b", "q5": "a"}
