"""The local model (course/local_model) through the course's path (its HTTP server and the openai
SDK, as a lesson reaches it) and through the raw binding (`llama_cpp.Llama` called directly), in
the same run, on the same prompts: prefill and decode tokens/s, time to first token cold and
cached, at about 2,000 and 6,000 prompt tokens, the ratio course/raw of each, and memory. Prints
figures; asserts nothing.

    python benchmarks/bench_local_model.py [--repeats 3] [--lengths 2000 6000] [--model /path/to.gguf]

Needs the local model (`./run.sh setup --local-model`). Like with like: both paths stream, run
on the engine's threads (decode and prompt batch alike: the binding's own default puts a batch
on every core, a different machine setting, not an overhead), and are read by the same loop,
one text piece a token. A third path, "http", reads the course's server with the standard
library's http.client and json instead of the SDK: what course/sdk costs beyond it is the SDK's
own parsing (pydantic objects per chunk), which any client of any provider pays; what http/raw
costs is the server's.

Every figure is measured from the client's side, the same way on every path: time to first
token (TTFT) from sending the request to the first piece of text; prefill tokens/s = prompt
tokens / cold TTFT; decode tokens/s = (pieces - 1) / (time from the first piece to the last);
"per CPU s" is prefill tokens per second of this process's CPU time, "CPU ms" this process's
CPU time until a cached request's first token, and "CPU ms/tok" its CPU time per decoded token
(every path runs in it, one at a time): figures a busy machine disturbs much less than the
wall clock. Cold: the prompt's first line is new, so only
the chat template's first few tokens are in the KV cache; cached: the same request again (the
engine evaluates its last token only). Decode is measured on both requests. Medians of
`--repeats` runs, the paths interleaved (the order turned each time) so a busy machine slows
them alike. A course/raw ratio near 1 says the server, the SDK and the metering add nothing
that matters; the absolute figures are this machine's, under its load at the time.
"""
from __future__ import annotations

import argparse
import gc
import http.client
import json
import os
import statistics
import time
from pathlib import Path

LENGTHS = (2000, 6000)
DECODE_TOKENS = 48
QUESTION = "Write a long story about a lighthouse keeper and a storm."
FACTS = ("The warehouse in {city} stores {n} crates of tea, checked every {d} days by the night "
         "shift, who log the temperature and the humidity in a blue notebook. ")
CITIES = ("Lisbon", "Osaka", "Lagos", "Lima", "Oslo", "Perth", "Quito", "Turin")


def rss_mb() -> float:
    """This process's resident memory now (VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def messages(engine, tokens: int, nonce: int) -> list[dict]:
    """A system prompt of filler facts, about `tokens` long with the question, first line new."""
    def build(n_facts):
        facts = "".join(FACTS.format(city=CITIES[i % len(CITIES)], n=100 + i * 7, d=1 + i % 9)
                        for i in range(n_facts))
        return [{"role": "system", "content": f"Run {nonce}. You are a storyteller.\n{facts}"},
                {"role": "user", "content": QUESTION}]

    n = max(1, tokens // 30)
    for _ in range(4):  # proportional steps converge in two or three
        size = len(engine.tokenize(engine.render(build(n))))
        n = max(1, round(n * tokens / size))
    return build(n)


def timed(request) -> tuple[float, float, int, float, float]:
    """(time to first text piece, this process's CPU seconds until then, pieces, seconds and CPU
    seconds from the first piece to the last) of the stream `request()` starts."""
    start, cpu = time.perf_counter(), time.process_time()
    first = last = first_cpu = None
    pieces = 0
    for chunk in request():
        choices = chunk["choices"] if isinstance(chunk, dict) else chunk.choices
        if not choices:
            continue
        delta = choices[0]["delta"] if isinstance(chunk, dict) else choices[0].delta
        text = delta.get("content") if isinstance(delta, dict) else delta.content
        if text:
            now = time.perf_counter()
            if first is None:
                first, first_cpu = now, time.process_time()
            last, pieces = now, pieces + 1
    return (first - start), (first_cpu - cpu), pieces, (last - first), time.process_time() - first_cpu


def sse_events(host: str, port: int, path: str, body: dict):
    """The JSON events of a Server-Sent Events response, read with the standard library only
    (a connection per request: the server closes one left idle for a minute, as while another
    path's cold prefill runs)."""
    connection = http.client.HTTPConnection(host, port)
    try:
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        for line in connection.getresponse():
            if line.startswith(b"data: ") and line.strip() != b"data: [DONE]":
                yield json.loads(line[6:])
    finally:
        connection.close()


PATHS = ("course", "http", "raw")


def run(path: Path, repeats: int, lengths=LENGTHS) -> None:
    import llama_cpp

    import course.local_model as local

    base = rss_mb()
    server = local.serve(path)
    engine = server.engine
    after_course = rss_mb()
    threads = engine.llama.n_threads
    raw = llama_cpp.Llama(model_path=str(path), n_ctx=engine.context_window, n_threads=threads,
                          n_threads_batch=engine.llama.n_threads_batch, logits_all=False,
                          chat_format="chat_template.default", verbose=False)
    after_raw = rss_mb()
    client = server.client(timeout=None)  # a cold 6,000-token prefill on a busy CPU takes minutes
    print(f"model {engine.name}: window {engine.context_window} tokens, {threads} thread(s) "
          f"(decode and batch, both paths), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    print(f"resident memory: {base:.0f} MB before loading; +{after_course - base:.0f} MB with the "
          f"course's server and engine; +{after_raw - after_course:.0f} MB for the raw binding's "
          f"copy\n")

    def course_stream(msgs):
        return client.chat.completions.create(
            model=engine.name, messages=msgs, max_tokens=DECODE_TOKENS, temperature=0,
            stream=True, stream_options={"include_usage": True})

    def http_stream(msgs):
        return sse_events(server.host, server.port, "/v1/chat/completions", {
            "model": engine.name, "messages": msgs, "max_tokens": DECODE_TOKENS,
            "temperature": 0, "stream": True, "stream_options": {"include_usage": True}})

    def raw_stream(msgs):
        return raw.create_chat_completion(messages=msgs, max_tokens=DECODE_TOKENS,
                                          temperature=0, top_k=0, min_p=0.0, top_p=1.0,
                                          stream=True)

    streams = {"course": course_stream, "http": http_stream, "raw": raw_stream}
    rows = {}
    nonce = 0
    for length in lengths:
        cells = {(p, k): [] for p in PATHS
                 for k in ("cold", "cold_cpu", "cached", "cached_cpu", "decode", "decode_cpu")}
        size = None
        for repeat in range(repeats):
            order = PATHS[repeat % len(PATHS):] + PATHS[:repeat % len(PATHS)]  # who goes first turns
            for name in order:
                stream = streams[name]
                nonce += 1
                msgs = messages(engine, length, nonce)
                size = len(engine.tokenize(engine.render(msgs)))
                cold, cold_cpu, pieces, decode_s, decode_cpu = timed(lambda: stream(msgs))
                cached, cached_cpu, pieces_again, decode_again, decode_cpu_again = timed(lambda: stream(msgs))
                cells[name, "cold"].append(cold)
                cells[name, "cold_cpu"].append(cold_cpu)
                cells[name, "cached"].append(cached)
                cells[name, "cached_cpu"].append(cached_cpu)
                for n, seconds, cpu in ((pieces, decode_s, decode_cpu),
                                        (pieces_again, decode_again, decode_cpu_again)):
                    if n > 1:
                        cells[name, "decode"].append((n - 1) / seconds)
                        cells[name, "decode_cpu"].append(cpu / (n - 1) * 1000)
                print(f"  ({name}, {size:,} tokens: cold {cold:.2f} s ({cold_cpu:.2f} s of CPU), "
                      f"cached {cached:.3f} s ({cached_cpu * 1000:.0f} ms of CPU), {pieces} pieces in {decode_s:.2f} s, "
                      f"then {decode_again:.2f} s; load {os.getloadavg()[0]:.1f})", flush=True)
        rows[length] = (size, {key: statistics.median(v) if v else float("nan")
                               for key, v in cells.items()})

    print(f"\n{'prompt':>7} {'path':<13} {'TTFT cold s':>11} {'TTFT cached s':>13} {'CPU ms':>6} "
          f"{'prefill tok/s':>13} {'per CPU s':>9} {'decode tok/s':>12} {'CPU ms/tok':>10}")
    for length, (size, m) in rows.items():
        for name in PATHS:
            print(f"{size:>7,} {name:<13} {m[name, 'cold']:>11.2f} {m[name, 'cached']:>13.3f} "
                  f"{m[name, 'cached_cpu'] * 1000:>6.1f} {size / m[name, 'cold']:>13.1f} "
                  f"{size / m[name, 'cold_cpu']:>9.1f} "
                  f"{m[name, 'decode']:>12.1f} {m[name, 'decode_cpu']:>10.2f}")
        for over, under in (("course", "raw"), ("http", "raw"), ("course", "http")):
            ratio = {k: m[over, k] / m[under, k]
                     for k in ("cold", "cold_cpu", "cached", "cached_cpu", "decode", "decode_cpu")}
            print(f"{'':>7} {over + '/' + under:<13} {ratio['cold']:>11.2f} "
                  f"{ratio['cached']:>13.2f} {ratio['cached_cpu']:>6.2f} "
                  f"{1 / ratio['cold']:>13.2f} "
                  f"{1 / ratio['cold_cpu']:>9.2f} {ratio['decode']:>12.2f} "
                  f"{ratio['decode_cpu']:>10.2f}   (ratio)")
    print("\ncold / cached TTFT (course): "
          + "; ".join(f"{size:,} tokens {m['course', 'cold'] / m['course', 'cached']:.0f}x"
                      for size, m in rows.values()))
    print(f"resident memory at the end: {rss_mb():.0f} MB (both copies loaded); "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    server.stop()
    raw.close()
    gc.collect()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", type=Path, help="a GGUF file (default: the bundled SmolLM2)")
    parser.add_argument("--lengths", type=int, nargs="+", default=LENGTHS,
                        help="prompt lengths in tokens (default: 2000 6000)")
    args = parser.parse_args()
    from course.local_model import weights

    run(args.model or weights.model_path(weights.LOCAL), args.repeats, args.lengths)


if __name__ == "__main__":
    main()
