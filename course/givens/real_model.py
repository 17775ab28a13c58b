"""What Chapter 16 gives (a real model on your machine): the real model's measurements as recorded
in data/real_model/ (read them with `recorded`), the lesson's sample conversation, a chat
template rendered as llama.cpp renders it, and the teaching model's stream timed by its own
simulated clock. No answers here: the lab's exercises are in `solutions.real_model`.

Why recorded and simulated times, never this machine's: a check that timed a stream here would
pass or fail with the machine's load. The recorded files hold what SmolLM2 did on the machine
their provenance names; the teaching model's `teaching_timing` (course/llm/timing.py) is a
formula of its token counts, the same on every machine.
"""
from __future__ import annotations

import json

from course.llm.timing import DECODE_TOKENS_PER_S
from course.paths import DATA_DIR

RECORDED = DATA_DIR / "real_model"

# A conversation of the shape chapter 01 sends: system, user, an assistant reply, user again.
SAMPLE_MESSAGES = (
    {"role": "system", "content": "You are a support agent for a bicycle shop."},
    {"role": "user", "content": "Do you repair hydraulic brakes?"},
    {"role": "assistant", "content": "Yes: bleeding and pad changes, usually the same day."},
    {"role": "user", "content": "How much is a bleed for both wheels?"},
)


def recorded(name: str) -> dict:
    """The results of data/real_model/<name>.json ("template", "stream", "cache", "needle", ...),
    measured on a real model by `python -m lesson_support.real_model <name>`."""
    path = RECORDED / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: it is measured by python -m lesson_support.real_model {name}")
    return json.loads(path.read_text(encoding="utf-8"))["results"]


def render_template(template: str, messages, add_generation_prompt: bool = True) -> str:
    """A GGUF file's Jinja2 chat template applied to `messages` the way llama.cpp's Python binding
    does (a sandboxed environment, blocks trimmed), ending with the generation prompt."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return environment.from_string(template).render(messages=[dict(m) for m in messages],
                                                     add_generation_prompt=add_generation_prompt)


def _field(obj, name: str):
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def timed_teaching_stream(chunks) -> dict:
    """A teaching model's stream (chunks as the SDK gives them, or their dicts) as a timed record
    {"pieces": [[seconds, text], ...], "usage": {...} or None, "teaching_timing": {...}}: the
    teaching model answers at once, so each piece is stamped with the time its `teaching_timing`
    says a real deployment would take: the first at `time_to_first_token_s`, each later one
    1 / DECODE_TOKENS_PER_S after the one before (one token a piece, as it streams text)."""
    texts, timing, usage = [], None, None
    for chunk in chunks:
        for choice in _field(chunk, "choices") or []:
            delta = _field(choice, "delta")
            if delta is not None and _field(delta, "content"):
                texts.append(_field(delta, "content"))
        extra = chunk if isinstance(chunk, dict) else (getattr(chunk, "model_extra", None) or {})
        timing = extra.get("teaching_timing") or timing
        if _field(chunk, "usage"):
            usage = _field(chunk, "usage")
            usage = usage if isinstance(usage, dict) else usage.model_dump()
    if timing is None:
        raise ValueError("no teaching_timing in this stream: is it the teaching model's?")
    first = timing["time_to_first_token_s"]
    return {"pieces": [[first + i / DECODE_TOKENS_PER_S, text] for i, text in enumerate(texts)],
            "usage": usage, "teaching_timing": timing}
