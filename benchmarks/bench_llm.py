"""Teaching-model latency per request by prompt size, with and without a cache hit,
and the offline vocabularies' set-up time. Prints figures; asserts nothing.

    python benchmarks/bench_llm.py
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

import course.llm
from course.llm import template

FILLER = "The build step {i} compiled src/module_{i}.c with exit code 0 in 12 ms.\n"


def messages_of(tokens: int, salt: str) -> list[dict]:
    per_line = len(template.encoding().encode_ordinary(FILLER.format(i=1000)))
    text = salt + "\n" + "".join(FILLER.format(i=i) for i in range(tokens // per_line))
    return [{"role": "system", "content": "You are a build agent."},
            {"role": "user", "content": text}]


def timed(client, messages) -> tuple[float, int, int]:
    start = time.perf_counter()
    usage = client.chat.completions.create(model="teaching-model", messages=messages).usage
    return time.perf_counter() - start, usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens


def latency_table(repeats: int = 5) -> None:
    print("Teaching model latency (median of %d), client -> server -> client:" % repeats)
    print(f"{'prompt tokens':>14} {'cold (s)':>9} {'cached (s)':>11} {'cached tokens':>14} {'s per 1k tok':>13}")
    with course.llm.serve() as server:
        client = server.client()
        timed(client, messages_of(1000, "warm-up"))
        for size in (1_000, 10_000, 100_000):
            cold, warm = [], []
            for r in range(repeats):
                messages = messages_of(size, f"run {r} size {size}")  # new prefix: a miss
                seconds, prompt, _ = timed(client, messages)
                cold.append(seconds)
                seconds, _, hit = timed(client, messages)  # same prompt again: a hit
                warm.append(seconds)
            c, w = statistics.median(cold), statistics.median(warm)
            print(f"{prompt:>14,} {c:>9.3f} {w:>11.3f} {hit:>14,} {1000 * c / prompt:>13.4f}")


def vocabulary_setup() -> None:
    code = "import time; t=time.perf_counter(); import course; print(time.perf_counter()-t)"
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TIKTOKEN_CACHE_DIR=cache)
        first = float(subprocess.check_output([sys.executable, "-c", code], env=env))
        later = float(subprocess.check_output([sys.executable, "-c", code], env=env))
    print(f"\nOffline vocabularies: first set-up {first:.2f} s (build + hash check), "
          f"later imports {later:.3f} s (size check only)")


if __name__ == "__main__":
    latency_table()
    vocabulary_setup()
