"""Teaching-model latency per request by prompt size, with and without a cache hit, for three
shapes of request (one long user message; an agent's history of tool calls and results, where
every rule has something to read; the same history with a request to summarise it), time to the
first streamed chunk against the whole reply, the Responses API's path against Chat
Completions', and the offline vocabularies' set-up time. Prints figures; asserts nothing.

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
from lesson_support.provider_context import items_of, responses_tools

FILLER = "The build step {i} compiled src/module_{i}.c with exit code 0 in 12 ms.\n"


def messages_of(tokens: int, salt: str) -> list[dict]:
    per_line = len(template.encoding().encode_ordinary(FILLER.format(i=1000)))
    text = salt + "\n" + "".join(FILLER.format(i=i) for i in range(tokens // per_line))
    return [{"role": "system", "content": "You are a build agent."},
            {"role": "user", "content": text}]


TOOLS = [{"type": "function", "function": {
    "name": name, "description": description,
    "parameters": {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]}}}
    for name, description, key in (("run_command", "Run a build command", "command"),
                                   ("read_file", "Read a file", "path"))]


def agent_history(tokens: int, salt: str, summarise: bool = False) -> list[dict]:
    """A build agent's run: tool calls and failing build logs until the request has `tokens`."""
    messages = [{"role": "system", "content": "You are a build agent. " + salt},
                {"role": "user", "content": "Build the firmware and fix the errors in src/main.c"}]
    step = "\n".join(f"[{j:3d}%] Building C object src/module_{{i}}_{j}.c.o" for j in range(40))
    per_step = len(template.encoding().encode_ordinary(step.format(i=1000))) + 60
    for i in range(max(1, tokens // per_step)):
        messages.append({"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{i}", "type": "function",
            "function": {"name": "run_command", "arguments": f'{{"command": "make step{i}"}}'}}]})
        messages.append({"role": "tool", "tool_call_id": f"call_{i}", "content": step.format(i=i) +
                         f"\nsrc/module_{i}.c:12: error: undefined reference to `init_{i}'\n[exit code: 2]"})
    if summarise:
        messages.append({"role": "user", "content": "Summarise the conversation so far."})
    return messages


def timed(client, messages, tools=None) -> tuple[float, int, int]:
    start = time.perf_counter()
    usage = client.chat.completions.create(model="teaching-model", messages=messages,
                                           **({"tools": tools} if tools else {})).usage
    return time.perf_counter() - start, usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens


SHAPES = {
    "one long user message": lambda size, salt: (messages_of(size, salt), None),
    "agent history, next step": lambda size, salt: (agent_history(size, salt), TOOLS),
    "agent history, summarise": lambda size, salt: (agent_history(size, salt, True), TOOLS),
}


def latency_table(repeats: int = 5) -> None:
    print("Teaching model latency (median of %d), client -> server -> client:" % repeats)
    with course.llm.serve() as server:
        client = server.client()
        timed(client, messages_of(1000, "warm-up"))
        for shape, build in SHAPES.items():
            print(f"\n{shape}")
            print(f"{'prompt tokens':>14} {'cold (s)':>9} {'cached (s)':>11} {'cached tokens':>14} "
                  f"{'s per 1k tok':>13}")
            for size in (1_000, 10_000, 100_000):
                cold, warm = [], []
                for r in range(repeats):
                    messages, tools = build(size, f"run {r} size {size}")  # new prefix: a miss
                    seconds, prompt, _ = timed(client, messages, tools)
                    cold.append(seconds)
                    seconds, _, hit = timed(client, messages, tools)  # same prompt again: a hit
                    warm.append(seconds)
                c, w = statistics.median(cold), statistics.median(warm)
                print(f"{prompt:>14,} {c:>9.3f} {w:>11.3f} {hit:>14,} {1000 * c / prompt:>13.4f}")


def cpu_table(repeats: int = 5) -> None:
    """The model's own work per request (no HTTP), in CPU seconds: steadier than wall-clock
    time on a busy machine."""
    from course.llm.server import TeachingModel

    model = TeachingModel()
    print("\nTeaching model CPU time per request, in process (median of %d):" % repeats)
    print(f"{'shape':<26} {'1k (s)':>8} {'10k (s)':>8} {'100k (s)':>9}")
    for shape, build in SHAPES.items():
        row = []
        for size in (1_000, 10_000, 100_000):
            times = []
            for r in range(repeats):
                messages, tools = build(size, f"cpu {r} size {size}")
                body = {"model": "teaching-model", "messages": messages, **({"tools": tools} if tools else {})}
                start = time.process_time()
                model.complete(body)
                times.append(time.process_time() - start)
            row.append(statistics.median(times))
        print(f"{shape:<26} {row[0]:>8.3f} {row[1]:>8.3f} {row[2]:>9.3f}")


def first_chunk_table(repeats: int = 5) -> None:
    """Time to the first streamed chunk vs to the whole reply, streamed and not (a summary: the
    longest reply), and the Responses API (the same conversation sent as items) vs
    Chat Completions. The teaching model computes the whole reply before
    its first chunk, so the first chunk comes about when a whole reply would: a real model's
    first token comes after the prefill alone, and its last after every token is decoded."""
    print(f"\nStreaming and the Responses API (median of {repeats}, seconds):")
    print(f"{'prompt tokens':>14} {'whole':>8} {'1st chunk':>10} {'last chunk':>11} {'responses':>10}")
    with course.llm.serve() as server:
        client = server.client()
        timed(client, messages_of(1000, "warm-up"))
        for size in (1_000, 10_000, 100_000):
            whole, first, last, responses = [], [], [], []
            for r in range(repeats):
                messages = agent_history(size, f"stream {r} size {size}", summarise=True)
                start = time.perf_counter()
                client.chat.completions.create(model="teaching-model", messages=messages, tools=TOOLS)
                whole.append(time.perf_counter() - start)
                messages = agent_history(size, f"stream again {r} size {size}", summarise=True)
                start = time.perf_counter()
                stream = client.chat.completions.create(model="teaching-model", messages=messages,
                                                        tools=TOOLS, stream=True)
                for k, _ in enumerate(stream):
                    if k == 0:
                        first.append(time.perf_counter() - start)
                last.append(time.perf_counter() - start)
                messages = agent_history(size, f"responses {r} size {size}", summarise=True)
                start = time.perf_counter()
                client.responses.create(model="teaching-model", instructions=messages[0]["content"],
                                        input=items_of(messages[1:]), store=False,
                                        tools=responses_tools(TOOLS))
                responses.append(time.perf_counter() - start)
            prompt = len(template.prompt_token_ids(messages, TOOLS))
            print(f"{prompt:>14,} {statistics.median(whole):>8.3f} {statistics.median(first):>10.3f} "
                  f"{statistics.median(last):>11.3f} {statistics.median(responses):>10.3f}")


def vocabulary_setup() -> None:
    code = "import time; t=time.perf_counter(); import course; print(time.perf_counter()-t)"
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TIKTOKEN_CACHE_DIR=cache)
        first = float(subprocess.check_output([sys.executable, "-c", code], env=env))
        later = float(subprocess.check_output([sys.executable, "-c", code], env=env))
    print(f"\nOffline vocabularies: first set-up {first:.2f} s (build + hash check), "
          f"later imports {later:.3f} s (size check only)")


def _post_all(server, bodies: list[bytes]) -> None:
    import http.client

    conn = http.client.HTTPConnection(server.host, server.port, timeout=600)
    for raw in bodies:
        conn.request("POST", "/v1/chat/completions", body=raw,
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status
    conn.close()


def throughput(server, clients: int, per_client: int, size: int, salt: str) -> float:
    """Requests per second with `clients` threads, each sending its own new prompts."""
    import json
    from concurrent.futures import ThreadPoolExecutor

    bodies = [[json.dumps({"model": "teaching-model",
                           "messages": messages_of(size, f"{salt} client {c} request {r}")}).encode()
               for r in range(per_client)] for c in range(clients)]
    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as threads:
        list(threads.map(lambda mine: _post_all(server, mine), bodies))
    return clients * per_client / (time.perf_counter() - start)


def concurrency_table(rounds: int = 3) -> None:
    """1 and 8 clients, threads only (the server before this change) and with worker
    processes, interleaved in rounds on the same machine: the ratios are what to read."""
    from course.llm.server import ServerHandle

    print(f"\nThroughput, 1 vs 8 concurrent clients (median of {rounds} interleaved rounds; "
          f"requests per second):")
    print(f"{'prompt tokens':>14} {'server':<26} {'1 client':>9} {'8 clients':>10} {'8 / 1':>7}")
    for size, per_client in ((10_000, 12), (100_000, 3)):
        rates: dict[tuple[str, int], list[float]] = {}
        servers = {"threads only (before)": ServerHandle(workers=0),
                   "worker processes (after)": ServerHandle()}
        for label, server in servers.items():  # warm-up: vocabulary, worker start-up
            throughput(server, 8, 1, size, f"warm {label}")
        for r in range(rounds):
            for label, server in servers.items():
                for clients in (1, 8):
                    n = per_client * (8 if clients == 1 else 1)  # the same number of requests
                    rates.setdefault((label, clients), []).append(
                        throughput(server, clients, n, size, f"round {r} {label} {clients}"))
        for label, server in servers.items():
            one, eight = (statistics.median(rates[(label, c)]) for c in (1, 8))
            print(f"{size:>14,} {label:<26} {one:>9.1f} {eight:>10.1f} {eight / one:>6.2f}x")
            server.stop()


def again_pattern() -> None:
    from course.llm.limits import AGAIN, asks_again

    text = "".join(FILLER.format(i=i) for i in range(6_000))  # about 400 KB
    for label, test in (("AGAIN.search (before)", lambda t: AGAIN.search(t) is not None),
                        ("asks_again (after)", asks_again)):
        times = []
        for _ in range(20):
            start = time.perf_counter()
            test(text)
            times.append(time.perf_counter() - start)
        print(f"  {label:<22} {statistics.median(times) * 1e3:7.2f} ms on {len(text):,} characters")


if __name__ == "__main__":
    latency_table()
    cpu_table()
    first_chunk_table()
    vocabulary_setup()
    print("\nThe `again` test of rule own_state on a long message (median of 20):")
    again_pattern()
    concurrency_table()
