"""Throughput of `count_request_tokens` against raw tiktoken on the same text (target: within
1.3x), of `truncate_to_tokens` and `token_pieces`, and how long the token explorer takes to
render a text of a few thousand tokens. Prints figures; asserts nothing.

    python benchmarks/bench_tokens.py

The baseline encodes the whole rendered request (`render_request`) in one `encode_ordinary`
call: the least work any exact count can do. The ratio is what walking the messages, building
each block and encoding the blocks one by one adds on top.
"""
from __future__ import annotations

import timeit

from lesson_support import cache_experiment as caching
from solutions import tokens as T

CORPUS = T.load_corpus()
TEXTS = [text for files in CORPUS.values() for text in files.values()]


def agent_run_request() -> tuple[list, list]:
    """The final request of the Chapter 05 scripted run: tools, system, task, 12 steps."""
    script = caching.scripted_steps(12)
    return caching.build_request("append-only", 12, script)


def corpus_conversation(turns: int = 60) -> tuple[list, list]:
    """Long messages: the corpus files as alternating user and assistant turns."""
    messages = [{"role": "system", "content": "You are a careful build engineer."}]
    for i in range(turns):
        messages.append({"role": "user" if i % 2 == 0 else "assistant",
                         "content": TEXTS[i % len(TEXTS)]})
    return messages, caching.TOOLS


def chatty_conversation(turns: int = 1000) -> tuple[list, list]:
    """The worst case for per-message overhead: many one-line messages."""
    lines = [line for text in TEXTS for line in text.splitlines() if line.strip()]
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": lines[i % len(lines)]}
            for i in range(turns)], None


def _number(fn) -> int:
    """Calls per timing so one timing lasts about 20 ms."""
    return max(1, int(0.02 / max(timeit.timeit(fn, number=1), 1e-6)))


def best_of(fn, repeat: int = 7) -> float:
    number = _number(fn)
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def best_of_pair(a, b, repeat: int = 40) -> tuple[float, float]:
    """Best time per call of a and b, timed in alternation so machine noise hits both."""
    na, nb = _number(a), _number(b)
    ta, tb = [], []
    for _ in range(repeat):
        ta.append(timeit.timeit(a, number=na) / na)
        tb.append(timeit.timeit(b, number=nb) / nb)
    return min(ta), min(tb)


def compare_counting() -> None:
    enc = T.get_encoding("o200k_base")
    print("count_request_tokens vs one tiktoken encode_ordinary of the rendered request "
          "(best of 40, timed alternately):")
    print(f"{'request':<34} {'messages':>8} {'tokens':>8} {'encode (ms)':>12} "
          f"{'count (ms)':>11} {'ratio':>6} {'Mtok/s':>7}")
    for name, (messages, tools) in [("agent run, 12 steps, tools", agent_run_request()),
                                    ("corpus conversation, 60 turns", corpus_conversation()),
                                    ("1,000 one-line messages", chatty_conversation())]:
        text = T.render_request(messages, tools)
        raw, counted = best_of_pair(lambda: enc.encode_ordinary(text),
                                    lambda: T.count_request_tokens(messages, tools, enc))
        n = T.count_request_tokens(messages, tools)
        print(f"{name:<34} {len(messages):>8,} {n:>8,} {raw * 1e3:>12.3f} {counted * 1e3:>11.3f} "
              f"{counted / raw:>6.2f} {n / counted / 1e6:>7.2f}")


def other_operations() -> None:
    text = "".join(TEXTS) * 4
    n = T.count_tokens(text)
    enc = T.get_encoding("o200k_base")
    raw = best_of(lambda: enc.encode_ordinary(text))
    print(f"\nOn the whole corpus x4 ({len(text):,} characters, {n:,} tokens), relative to one "
          f"encode_ordinary ({raw * 1e3:.2f} ms):")
    for label, fn in [("truncate_to_tokens to half", lambda: T.truncate_to_tokens(text, n // 2)),
                      ("token_pieces (widget split)", lambda: T.token_pieces(text))]:
        seconds = best_of(fn, repeat=5)
        print(f"  {label:<28} {seconds * 1e3:>8.2f} ms  ({seconds / raw:.2f}x)")


def widget_render() -> None:
    """One keystroke's work in the token explorer (after the debounce): both encodings' HTML."""
    from lesson_support.widgets.tokens import MAX_SHOWN_TOKENS, comparison_html

    mixed = "".join(TEXTS)
    print(f"\nToken explorer, one render of both encodings (colouring stops at "
          f"{MAX_SHOWN_TOKENS:,} tokens per encoding):")
    for copies in (1, 3, 6):
        text = mixed * copies
        seconds = best_of(lambda: comparison_html(text), repeat=5)
        print(f"  {T.count_tokens(text):>7,} tokens ({len(text):>6,} characters) "
              f"{seconds * 1e3:>8.1f} ms")


if __name__ == "__main__":
    compare_counting()
    other_operations()
    widget_render()
