"""Two ways to send chapter 16's requests, behind one interface: `request(messages, **options)`
returns an iterable of stream chunks whose last one carries `usage` with
`prompt_tokens_details.cached_tokens`.

- `LlamaEngine(engine)`: the raw binding (`engine.llama`, a `llama_cpp.Llama`, called with
  `create_completion` on the prompt's token ids, the course's server bypassed), the model's own
  template (`engine.render`, from `course.local_model.Engine`), one KV cache slot. llama_cpp reuses the longest prefix its slot shares with the new prompt (always
  evaluating at least the last token); `cached_tokens` is that prefix, computed the same way
  before the call. It can also drop its state (`reset`), and save and restore it.
- `openai_requester(client, model)`: any OpenAI-compatible server through the `openai` SDK: the
  course's local model, the teaching model, or a provider. Cached tokens are what the server
  reports (None when it reports nothing).

The measuring functions (prefix_cache, needle, probes) take a `request` callable and nothing
else, so they measure the raw binding and the course's path alike.
"""
from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

from lesson_support.kv_cache import common_prefix_length


class LlamaEngine:
    """The raw binding as a streaming chat backend that reports cached tokens."""

    def __init__(self, engine):
        self.engine, self.llm = engine, engine.llama

    def token_ids(self, messages: Sequence[dict]) -> list[int]:
        return self.engine.tokenize(self.engine.render(list(messages)))

    def reusable(self, ids: Sequence[int]) -> int:
        """How many of `ids` llama_cpp will take from its slot instead of evaluating: the prefix
        shared with what the slot holds, never the last token (llama_cpp evaluates it again to
        get fresh logits)."""
        held = self.llm._input_ids[: self.llm.n_tokens]  # the tokens whose keys/values it holds
        return common_prefix_length(held, ids[:-1])

    def __call__(self, messages: Sequence[dict], max_tokens: int = 16, temperature: float = 0.0,
                 seed: int = 0, **_ignored) -> Iterator[dict]:
        ids = self.token_ids(messages)
        expected = self.reusable(ids)
        completion = 0
        for chunk in self.llm.create_completion(ids, max_tokens=max_tokens, temperature=temperature,
                                                seed=seed, stream=True):
            completion += chunk["choices"][0]["finish_reason"] is None  # the closing chunk has no token
            yield chunk
        # What llama.cpp did (the course engine's meter reads n_tokens at its first eval); the
        # prediction only where the binding is not the course's metered one.
        meter = getattr(self.llm, "meter", None)
        cached = meter.cached if meter is not None else expected
        yield {"choices": [], "usage": {"prompt_tokens": len(ids), "completion_tokens": completion,
                                        "prompt_tokens_details": {"cached_tokens": cached},
                                        "predicted_cached_tokens": expected}}

    def reset(self) -> None:
        """Forget every cached key and value: the next request starts cold."""
        self.engine.forget()

    def save(self):
        """The slot's state (keys, values, tokens) and how long saving took."""
        start = time.perf_counter()
        state = self.llm.save_state()
        return state, time.perf_counter() - start

    def restore(self, state) -> float:
        """Put a saved state back; the seconds it took."""
        start = time.perf_counter()
        self.llm.load_state(state)
        return time.perf_counter() - start


def openai_requester(client, model: str, **defaults):
    """`request(messages, **options)` over an OpenAI-compatible server, streamed, usage asked
    for in the last chunk."""
    def request(messages: Sequence[dict], max_tokens: int = 16, temperature: float = 0.0,
                seed: int = 0, **options):
        return client.chat.completions.create(
            model=model, messages=list(messages), stream=True, max_tokens=max_tokens,
            temperature=temperature, seed=seed, stream_options={"include_usage": True},
            **{**defaults, **options})
    return request
