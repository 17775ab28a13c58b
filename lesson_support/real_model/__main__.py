"""Measure chapter 16's grids on this machine and write them to data/real_model/*.json.

    python -m lesson_support.real_model all            # everything (tens of minutes on 2 cores)
    python -m lesson_support.real_model cache --rounds 3 --lengths 500 2000
    python -m lesson_support.real_model needle --trials 10 --lengths 500 1000 2000

Every file holds {"provenance": where, when and with what it was measured, "results": ...}; the
lesson prints these as measured results. Figures depend on the machine and its load: read the
ratios. Progress goes to stderr.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
from pathlib import Path

from course.paths import DATA_DIR

OUT_DIR = DATA_DIR / "real_model"
PARTS = ("template", "stream", "cache", "needle", "attention", "probes")


def write(name: str, model_path, results, out_dir: Path = OUT_DIR, started: dict | None = None,
          **settings) -> Path:
    """The results with their provenance; `started` (a provenance taken before measuring) adds
    when the run began and the machine's load then."""
    from lesson_support.real_model.weights import provenance

    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.json"
    stamp = provenance(model_path, **settings)
    if started:
        stamp["started_at"] = started["measured_at"]
        stamp["machine"]["load_average_at_start"] = started["machine"]["load_average_1_5_15"]
    payload = {"provenance": stamp, "results": results}
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def settings_of(args) -> dict:
    return {k: v for k, v in vars(args).items() if k not in ("parts", "out", "model", "started")}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def part_template(model, args):
    from lesson_support.real_model import template as t

    render, own = model.render, t.model_counter(model)
    counters = {"SmolLM2 (its own)": own, "o200k_base (tiktoken)": t.o200k_counter}
    return {"template": t.template_of(model),
            "rendered": render(t.SAMPLE_MESSAGES),
            "rendered_without_system": render(t.SAMPLE_MESSAGES[1:2]),
            "counts": t.template_table(t.SAMPLE_MESSAGES, render, counters),
            "by_length": t.overhead_by_length(render, own),
            "by_length_without_system": t.overhead_by_length(render, own, t.SAMPLE_MESSAGES[1:]),
            "language_cost": t.language_cost(counters)}


def part_stream(model, args):
    from lesson_support.real_model.engine import LlamaEngine
    from lesson_support.real_model.filler import policy
    from lesson_support.real_model.stream import stream_summary, timed_stream
    from lesson_support.real_model.template import model_counter

    raw, count = LlamaEngine(model), model_counter(model)
    rows = []
    for length in args.stream_lengths:
        for r in range(args.rounds):
            raw.reset()
            system = "\n".join(policy(10_000 * length + r, length, count))
            messages = [{"role": "system", "content": system},
                        {"role": "user", "content": "Write a short note to a new colleague about "
                                                    "these rules."}]
            record = timed_stream(lambda: raw(messages, max_tokens=args.decode_tokens, seed=r))
            summary = stream_summary(record)
            prompt = record["usage"]["prompt_tokens"]
            rows.append({"length": length, "round": r, "prompt_tokens": prompt,
                         "completion_tokens": record["usage"]["completion_tokens"],
                         "ttft_s": summary["ttft_s"], "prefill_tokens_per_s": prompt / summary["ttft_s"],
                         "decode_tokens_per_s": summary["decode_pieces_per_s"],
                         "gap_median_s": summary["gap_median_s"], "gap_max_s": summary["gap_max_s"],
                         "first_pieces": [[round(s, 4), text] for s, text in record["pieces"][:24]]})
            log(f"stream {length} round {r}: ttft {summary['ttft_s']:.2f}s "
                f"decode {summary['decode_pieces_per_s']}")
    return {"rows": rows, "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}  # Linux: KiB


def part_cache(model, args):
    import course.llm as teaching
    from lesson_support.real_model import prefix_cache as pc
    from lesson_support.real_model.engine import LlamaEngine
    from lesson_support.real_model.template import model_counter

    raw, count = LlamaEngine(model), model_counter(model)
    with teaching.serve() as server:
        simulated = pc.teaching_rounds(server.client(), teaching.model_name(), count, args.lengths)
    # the eviction demonstration first, at the shortest length (it sends four full prompts)
    eviction = pc.eviction_and_restore(raw, count, min(args.lengths))
    rows = []
    for r in range(args.rounds):  # a round at every length at a time, written as it completes
        rows += [{**row, "round": r} for row in
                 pc.measure_rounds(raw, count, args.lengths, 1, reset=raw.reset, seed=r, progress=log)]
        measured = pc.summarise(rows)
        results = {"rounds": r + 1, "rows": rows, "summary": measured, "teaching": simulated,
                   "comparison": pc.comparison(measured, simulated), "eviction": eviction}
        write("cache", model.path, results, args.out, args.started, **settings_of(args))
    return results


def part_needle(model, args):
    from lesson_support.real_model import needle
    from lesson_support.real_model.engine import LlamaEngine
    from lesson_support.real_model.template import model_counter

    raw, count = LlamaEngine(model), model_counter(model)

    def save(rows):  # after every trial: a run cut short keeps what it measured
        results = {"trials": rows, "cells": needle.cells(rows), "independence": needle.independence(rows)}
        write("needle", model.path, results, args.out, args.started, **settings_of(args))
        return results

    rows = needle.run_grid(raw, count, args.lengths, depths=tuple(args.depths), trials=args.trials,
                           distractors=tuple(args.distractors), progress=log, after_trial=save)
    return save(rows)


def part_attention(model, args):
    from lesson_support.real_model.attention_figure import build_figure, check_figure

    def detokenize(i):
        return model.llama.detokenize([i], special=True).decode("utf-8", errors="replace")

    figure = build_figure(str(model.path), model.tokenize, detokenize)
    problems = check_figure(figure)
    if problems:
        raise SystemExit("the attention figure fails its own checks: " + "; ".join(problems))
    return figure


def part_probes(model, args):
    """Needs an OpenAI-compatible server for the real model (tools, tool calls): the course's
    local model backend. Also runs the teaching model, whose table must agree with its rules."""
    import course.llm as teaching
    from lesson_support.real_model.probes import simulation_table

    with teaching.serve() as server:
        simulated = simulation_table(server.client(), teaching.model_name(), trials=args.probe_trials)
    from course.local_model import serve as serve_local  # the course's local backend (issue 48)
    from lesson_support.real_model.weights import MEASURING_THREADS

    with serve_local(threads=MEASURING_THREADS) as server:
        real = simulation_table(server.client(), server.model_name, trials=args.probe_trials, progress=log)
    return {"teaching": simulated, "real": real}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lesson_support.real_model", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="+", choices=PARTS + ("all",))
    parser.add_argument("--lengths", type=int, nargs="+", default=[500, 2000, 4000])
    parser.add_argument("--stream-lengths", type=int, nargs="+", default=[128, 512, 2000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--decode-tokens", type=int, default=64)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--distractors", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--depths", type=float, nargs="+", default=[0.0, 0.25, 0.5, 0.75, 1.0])
    parser.add_argument("--probe-trials", type=int, default=10)
    parser.add_argument("--model", help="a GGUF file (default: the course's SmolLM2)")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)

    from course.local_model import LocalModelUnavailable
    from lesson_support.real_model.weights import load_engine, provenance

    try:
        model = load_engine(args.model)
    except LocalModelUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    parts = PARTS if "all" in args.parts else args.parts
    for name in parts:
        log(f"--- {name}")
        args.started = provenance(model.path)
        args.n_threads = model.llama.context_params.n_threads
        args.n_threads_batch = model.llama.context_params.n_threads_batch
        results = globals()[f"part_{name}"](model, args)
        print(write(name, model.path, results, args.out, args.started, **settings_of(args)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
