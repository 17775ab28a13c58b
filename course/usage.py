"""One reading of a chat completion's `usage`, whichever provider sent it.

Providers agree on `prompt_tokens` and `completion_tokens` and disagree on the cache:

    shape       where the cache figures are                                  cache writes
    openai      prompt_tokens_details.cached_tokens (the teaching model too)  prompt_tokens_details
                (Responses API: input_tokens, input_tokens_details)           .cache_write_tokens
    deepseek    prompt_cache_hit_tokens, prompt_cache_miss_tokens             not reported
    anthropic   cache_read_input_tokens (extra fields, e.g. through a proxy)  cache_creation_input_tokens
    plain       nowhere: Ollama, vLLM without prompt details                  not reported
    none        no usage at all (a stream without include_usage)              not reported
    record      top-level cached_tokens: the course's own flat records        cache_write_tokens
                (a dict, NamedTuple or dataclass), written from a Usage       (top level)

`read_usage(usage)` returns a `Usage` whose figures are ints, or None where the provider does not
report one. None is never turned into 0: "no cache hit" and "the provider does not say" are
different facts, and a bill computed from a silent 0 is wrong without anyone noticing.
`describe(None)` says so in words, and `total(figures)` sums figures only when all were reported.

`Usage.reasoning` is the reply's reasoning tokens where the provider reports them, in any shape:
`completion_tokens_details.reasoning_tokens` (OpenAI, DeepSeek's reasoner, the teaching model's
reasoning models) or `output_tokens_details.reasoning_tokens` (the Responses API); they are part
of `completion`, billed as output. None where not reported (Anthropic bills thinking inside
`output_tokens` without a separate count; Ollama; DeepSeek's chat model); a flat record may
carry it as top-level `reasoning_tokens`.

A value that is there but malformed (not an integer, a bool, negative) raises ValueError naming
the field: it means the provider or a proxy sent something broken, which is worth stopping for.
"""
from __future__ import annotations

from collections.abc import Mapping
import dataclasses
from dataclasses import dataclass

NOT_REPORTED = "not reported by this provider"
SHAPES = ("openai", "deepseek", "anthropic", "plain", "none", "record")


@dataclass(frozen=True)
class Usage:
    """Token figures of one request; None where the provider does not report the figure."""

    prompt: int | None
    completion: int | None
    cached: int | None
    cache_write: int | None
    provider_shape: str
    reasoning: int | None = None  # reasoning tokens of the reply, part of `completion`

    @property
    def uncached(self) -> int | None:
        """Prompt tokens not read from the cache (None unless both figures are known)."""
        if self.prompt is None or self.cached is None:
            return None
        return self.prompt - self.cached

    def __str__(self) -> str:
        return (f"prompt {describe(self.prompt)}, completion {describe(self.completion)}, "
                f"cached {describe(self.cached)}, cache writes {describe(self.cache_write)} "
                f"({self.provider_shape} usage)")


def describe(value: int | None, spec: str = ",") -> str:
    """A figure for print: formatted with `spec`, or "not reported by this provider"."""
    return NOT_REPORTED if value is None else format(value, spec)


def _as_mapping(obj, where: str) -> Mapping | None:
    if obj is None or isinstance(obj, Mapping):
        return obj
    if hasattr(obj, "model_dump"):  # the openai SDK's pydantic models, extra fields included
        return obj.model_dump()
    if hasattr(obj, "_asdict"):  # a NamedTuple record
        return obj._asdict()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    raise TypeError(f"{where} must be a usage object from the openai SDK, a dict, a record or "
                    f"None, not {type(obj).__name__}")


def _count(fields: Mapping | None, name: str, where: str = "usage") -> int | None:
    """fields[name] as a non-negative int, None if absent or null; ValueError if malformed."""
    if fields is None:
        return None
    value = fields.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}.{name} must be a non-negative integer, got {value!r}")
    if value < 0:
        raise ValueError(f"{where}.{name} must be a non-negative integer, got {value}")
    return value


def total(values) -> int | None:
    """The sum of usage figures, or None if any of them was not reported: a partial sum would
    pass for the whole and mislead."""
    values = list(values)
    return None if any(v is None for v in values) else sum(values)


def read_usage(usage) -> Usage:
    """Read `completion.usage` (an SDK object, a dict or None) in any known provider shape."""
    fields = _as_mapping(usage, "usage")
    read = _read(fields)
    reasoning = None
    for name in ("completion_tokens_details", "output_tokens_details"):
        details = _as_mapping((fields or {}).get(name), f"usage.{name}")
        if reasoning is None:
            reasoning = _count(details, "reasoning_tokens", f"usage.{name}")
    if reasoning is None and read.provider_shape == "record":
        reasoning = _count(fields, "reasoning_tokens")  # the course's flat records
    return dataclasses.replace(read, reasoning=reasoning) if reasoning is not None else read


def _read(fields: Mapping | None) -> Usage:
    if fields is None:
        return Usage(None, None, None, None, "none")
    details = _as_mapping(fields.get("prompt_tokens_details"), "usage.prompt_tokens_details")
    prompt = _count(fields, "prompt_tokens")
    completion = _count(fields, "completion_tokens")
    if completion is None:
        completion = _count(fields, "output_tokens")  # Anthropic's own name

    read = _count(fields, "cache_read_input_tokens")
    created = _count(fields, "cache_creation_input_tokens")
    if read is not None or created is not None:
        if prompt is None:
            # Anthropic's input_tokens counts only the tokens after the last cache breakpoint;
            # the prompt is all three together.
            prompt = total((_count(fields, "input_tokens"), read or 0, created or 0))
        return Usage(prompt, completion, read, created, "anthropic")

    hit = _count(fields, "prompt_cache_hit_tokens")
    miss = _count(fields, "prompt_cache_miss_tokens")
    if hit is not None or miss is not None:
        if prompt is None:
            prompt = total((hit, miss))
        if hit is None and prompt is not None:
            hit = prompt - miss if prompt >= miss else None
        return Usage(prompt, completion, hit, None, "deepseek")

    if prompt is None and details is None and fields.get("input_tokens_details") is not None:
        # OpenAI's Responses API: input_tokens, input_tokens_details.cached_tokens
        details = _as_mapping(fields["input_tokens_details"], "usage.input_tokens_details")
        prompt = _count(fields, "input_tokens")
    cached = _count(details, "cached_tokens", "usage.prompt_tokens_details")
    if cached is not None:
        written = _count(details, "cache_write_tokens", "usage.prompt_tokens_details")
        return Usage(prompt, completion, cached, written, "openai")
    if "cached_tokens" in fields:  # a flat record; its None still means "not reported"
        return Usage(prompt, completion, _count(fields, "cached_tokens"),
                     _count(fields, "cache_write_tokens"), "record")
    return Usage(prompt, completion, None, None, "plain")
