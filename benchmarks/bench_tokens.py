"""Throughput of `count_request_tokens` against raw tiktoken on the same text (target: within
1.2x on every request shape, issue 35 item 7), of `truncate_to_tokens` and `token_pieces`, and
how long the token explorer takes to render a text of a few thousand tokens. Prints figures;
asserts nothing.

    python benchmarks/bench_tokens.py

The baseline encodes the whole rendered request (`render_request`) in one `encode_ordinary`
call: the least work any exact count can do. The ratio is what walking the messages, building
each block and encoding the blocks one by one adds on top. `count_request_tokens` as it was
before issue 35 (commit OLD_COMMIT, loaded from git into a temporary module) is timed in the
same run, the three taking turns, so a busy machine slows all of them alike.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

from lesson_support import cache_experiment as caching
from solutions import tokens as T

ROOT = Path(__file__).resolve().parents[1]
OLD_COMMIT = "b8cc463"  # solutions/tokens.py before issue 35 item 7
CORPUS = T.load_corpus()
TEXTS = [text for files in CORPUS.values() for text in files.values()]


def old_tokens_module():
    """solutions/tokens.py at OLD_COMMIT as a module of its own, or None without git or that
    commit (e.g. in a shallow clone)."""
    done = subprocess.run(["git", "show", f"{OLD_COMMIT}:solutions/tokens.py"], cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"(no old version to compare: git show failed: {done.stderr.strip()})")
        return None
    path = Path(tempfile.mkdtemp(prefix="bench_tokens_")) / "tokens_before_issue_35.py"
    path.write_text(done.stdout, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("tokens_before_issue_35", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- request shapes

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


def tool_heavy_run(steps: int = 200, parallel: int = 3) -> tuple[list, list]:
    """The worst case for tool calls: many short parallel calls, each with a one-line result."""
    messages = [{"role": "system", "content": "You are a build agent."},
                {"role": "user", "content": "Find why the aarch64 build cannot find zlib."}]
    for i in range(steps):
        calls = [{"id": f"call_{i:03d}_{j}", "type": "function", "function": {
            "name": "read_file", "arguments": json.dumps({"path": f"src/mod_{i}_{j}.c",
                                                          "offset": 10 * i})}}
                 for j in range(parallel)]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages.extend({"role": "tool", "tool_call_id": c["id"], "content": f"{i + j} lines"}
                        for j, c in enumerate(calls))
    return messages, caching.TOOLS


def as_sdk_objects(request: tuple[list, list]) -> tuple[list, list]:
    """The same request with each assistant message as the openai SDK's ChatCompletionMessage,
    as agent code appends `response.choices[0].message`."""
    from openai.types.chat import ChatCompletionMessage

    messages, tools = request
    return [ChatCompletionMessage.model_validate(m) if m["role"] == "assistant" else m
            for m in messages], tools


SHAPES = {
    "agent run, 12 steps, tools": agent_run_request,
    "corpus conversation, 60 turns": corpus_conversation,
    "1,000 one-line messages": chatty_conversation,
    "tool-heavy, 600 calls": tool_heavy_run,
    "tool-heavy, 600 calls, SDK objects": lambda: as_sdk_objects(tool_heavy_run()),
    "agent run, SDK objects": lambda: as_sdk_objects(agent_run_request()),
}


# --------------------------------------------------------------------------- timing

def _number(fn) -> int:
    """Calls per timing so one timing lasts about 20 ms."""
    return max(1, int(0.02 / max(timeit.timeit(fn, number=1), 1e-6)))


def best_of(fn, repeat: int = 7) -> float:
    number = _number(fn)
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def best_of_turns(fns, repeat: int = 30) -> list[float]:
    """Best CPU time per call of each function, timed in turns so machine noise hits all (CPU
    time, not wall time: on a shared machine the waits for a core would swamp the figures)."""
    numbers = [_number(fn) for fn in fns]
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, (fn, number) in enumerate(zip(fns, numbers)):
            seconds = timeit.timeit(fn, number=number, timer=time.process_time)
            best[k] = min(best[k], seconds / number)
    return best


def compare_counting() -> None:
    enc = T.get_encoding("o200k_base")
    old = old_tokens_module()
    print("count_request_tokens vs one tiktoken encode_ordinary of the rendered request "
          "(best CPU time of 30, timed in turns; target ratio <= 1.2):")
    print(f"{'request':<36} {'messages':>8} {'tokens':>7} {'encode ms':>10} {'old ms':>8} "
          f"{'new ms':>8} {'old x':>6} {'new x':>6} {'same count':>10}")
    for name, shape in SHAPES.items():
        messages, tools = shape()
        text = T.render_request(messages, tools)
        n = T.count_request_tokens(messages, tools)
        fns = [lambda: enc.encode_ordinary(text),
               lambda: T.count_request_tokens(messages, tools, enc)]
        if old is not None:
            fns.append(lambda: old.count_request_tokens(messages, tools, enc))
        raw, new, *before = best_of_turns(fns)
        if before:
            same = "yes" if old.count_request_tokens(messages, tools) == n else "NO"
            old_ms, old_x = f"{before[0] * 1e3:.3f}", f"{before[0] / raw:.2f}"
        else:
            same, old_ms, old_x = "-", "-", "-"
        print(f"{name:<36} {len(messages):>8,} {n:>7,} {raw * 1e3:>10.3f} {old_ms:>8} "
              f"{new * 1e3:>8.3f} {old_x:>6} {new / raw:>6.2f} {same:>10}")


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
    if "--counting" not in sys.argv:
        other_operations()
        widget_render()
