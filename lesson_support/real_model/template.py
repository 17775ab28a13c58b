"""Experiment 2-1's first half on a real model: its chat template, rendered with its special
tokens, and what the envelope costs in its own tokens against tiktoken's count of the same text.

The template is the one in the GGUF file's metadata (`tokenizer.chat_template`), rendered by the
course's local model engine (`course.local_model.Engine.render`, llama_cpp's own Jinja2
formatter): nothing here re-implements it. The counting functions take `render(messages)` and
`count(text) -> int` callables, so they run on any template and tokenizer (the model's,
tiktoken's, a recorded table) and are tested without the model.

Chapter 02's point, on a real model: a tokenizer's coverage decides what a language costs.
SmolLM2's vocabulary (49,152 tokens) was trained on English text and code; o200k_base (200,019)
covers Chinese far better. `language_cost` reads chapter 02's corpus, the same texts in English
and Chinese, and reports tokens per character under each tokenizer.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from course.givens.real_model import SAMPLE_MESSAGES  # noqa: F401 (the lesson's conversation)
from solutions.real_model import template_overhead as envelope_overhead  # lab 16's answer
from solutions.tokens import CORPUS_DIR, count_tokens, load_corpus


def template_of(engine) -> str:
    """The Jinja2 chat template stored in the model file's metadata."""
    return engine.llama.metadata["tokenizer.chat_template"]


def model_counter(engine) -> Callable[[str], int]:
    """Token count under the model's own tokenizer, special tokens read as special (one token
    each, as the engine feeds them) and no BOS added (the template writes its own, if any)."""
    return lambda text: len(engine.tokenize(text))


def template_table(messages: Sequence[dict], render: Callable[[Sequence[dict]], str],
                   counters: dict[str, Callable[[str], int]]) -> list[dict]:
    """The same rendered conversation counted by each tokenizer in `counters` (name -> count):
    one row per tokenizer with the envelope's overhead, and the count of the same text."""
    rows = []
    for name, count in counters.items():
        row = envelope_overhead(messages, render, count)
        row.pop("prompt")
        rows.append({"tokenizer": name, **row})
    return rows


def overhead_by_length(render: Callable[[Sequence[dict]], str], count: Callable[[str], int],
                       messages: Sequence[dict] = SAMPLE_MESSAGES) -> list[dict]:
    """The envelope's overhead as the conversation grows one message at a time: the first row
    carries any fixed part (a default system prompt the template inserts, the generation
    prompt), later rows show the cost per added message."""
    rows = []
    for n in range(1, len(messages) + 1):
        row = envelope_overhead(messages[:n], render, count)
        row.pop("prompt")
        rows.append(row)
    return rows


def o200k_counter(text: str) -> int:
    """tiktoken o200k_base, special-token look-alikes as plain text (what it would bill for the
    same characters)."""
    return count_tokens(text, "o200k_base")


def language_cost(counters: dict[str, Callable[[str], int]], corpus_dir=CORPUS_DIR,
                  kinds: Sequence[str] = ("english", "chinese")) -> list[dict]:
    """Tokens per character of chapter 02's corpus (the same texts in English and Chinese) under
    each tokenizer: one row per (content kind, tokenizer)."""
    corpus = load_corpus(corpus_dir)
    rows = []
    for kind in kinds:
        text = "".join(corpus[kind].values())
        for name, count in counters.items():
            tokens = count(text)
            rows.append({"content": kind, "tokenizer": name, "chars": len(text), "tokens": tokens,
                         "tokens_per_char": tokens / len(text)})
    return rows
