"""What tracing costs a lesson (issue 49): lessons run with COURSE_TRACE=off and on, alternately,
and the trace files the traced runs wrote.

    python benchmarks/bench_tracing.py [NOTEBOOK ...] [--rounds N] [--replay-only | --lessons-only
                                        | --imports-only]

First, tracing's fixed cost to a kernel: what it imports (the SDK, the official instrumentation,
the OTLP JSON encoder) after what a lesson's kernel already has, and the teardown of it all at
exit, each in fresh processes. Then chapter 11's run replayed in this process: all 212 requests of its agent (layers 1-4 of
the layered compactor, so every request fits the window) sent to a private teaching model, with
tracing off and on alternately; prints the ratio and the trace file of one traced replay (its
size and spans: compositions and hashes, no contents). Then the lessons: default 01, 05 and 11,
five rounds. Each round runs every lesson off then on (the order swaps every round, so a machine
getting busier does not favour one side), in a fresh kernel as Run All does. The figure is the
kernel's CPU time (user + system, from the operating system's accounting of the finished kernel
process and anything it waited for), not the wall time: on a shared machine other processes
stretch the wall time of a run but not its CPU time. The teaching model runs inside the kernel,
so its work counts too. The wall time is what a student waits: the whole run (kernel start,
cells, shutdown) and its cells alone (the stricter: tracing starts in the first cell, the kernel
start is the same either way); on a quiet machine only. Prints each run's figures, then per
lesson and per measure the median off and on, their ratio, and the spread: the lowest and highest
on/off ratio of the rounds' pairs; and the size of the OTLP JSON written by the last traced run
(with how many request spans it holds). Never asserted: figures depend on the machine.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lessons import time_notebook  # noqa: E402

from course.tracing.setup import ENV_DIR  # noqa: E402

LESSONS = ("01_agent_loop.ipynb", "05_prompt_caching.ipynb", "11_production_compaction.ipynb")


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished, waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(path: Path, tracing: str, folder: Path) -> tuple[float, float, float, list[Path]]:
    """Wall seconds (the whole run: kernel start, cells, shutdown; and the cells alone) and the
    kernel's CPU seconds for one Run All of `path` with COURSE_TRACE=`tracing`, and the trace
    files it wrote (into `folder`, empty: other processes write into .traces/ too). The kernel
    is this process's child and is waited for when the run ends, so its CPU time is the change
    in the children's."""
    os.environ["COURSE_TRACE"] = tracing  # the kernel inherits them
    os.environ[ENV_DIR] = str(folder)
    cpu = children_cpu()
    _, total, cells = time_notebook(path)
    cpu = children_cpu() - cpu
    return total, sum(seconds for _, seconds, _ in cells), cpu, sorted(folder.glob("*.jsonl"))


def ratio_line(name: str, off: list, on: list, unit: str = "s") -> str:
    """Medians off and on (with their ranges), the ratio of the medians, and the spread: the
    lowest and highest on/off ratio of one round's pair."""
    pairs = sorted(b / a for a, b in zip(off, on))
    return (f"{name}: off {statistics.median(off):.2f} {unit} ({min(off):.2f}-{max(off):.2f}), "
            f"on {statistics.median(on):.2f} {unit} ({min(on):.2f}-{max(on):.2f}), "
            f"on/off {statistics.median(on) / statistics.median(off):.3f} "
            f"(pairs {pairs[0]:.3f}-{pairs[-1]:.3f})")


def request_spans(files: list[Path]) -> int:
    count = 0
    for file in files:
        for line in file.read_text().splitlines():
            for rs in json.loads(line)["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    count += sum(s["name"].startswith("chat ") for s in ss["spans"])
    return count


def replay_contexts() -> tuple[list, list]:
    """Every request chapter 11's agent sends with layers 1-4 (the lesson's "1-4 archive"), and
    the run's tools."""
    from course.givens.production_compaction import load_run
    from solutions.production_compaction import LayeredCompactor, ResultStore, Settings

    run = load_run()
    compactor = LayeredCompactor(("budget", "noise", "micro", "archive"), Settings(),
                                 tools=run.tools, store=ResultStore())
    history, contexts = run.head(), []
    for step in run.steps:
        history = history + step["messages"]
        contexts.append(compactor(history))
    return contexts, run.tools


def replay(contexts: list, tools: list, tracing: str, directory: Path):
    """Seconds to send every context to a fresh private teaching model, and the tracing state."""
    import course.llm as llm
    from course import tracing as course_tracing

    course_tracing.shutdown()
    os.environ["COURSE_TRACE"] = tracing
    state = course_tracing.install(directory=directory)
    with llm.serve() as server:
        client = server.client()
        start, cpu = time.perf_counter(), time.process_time()
        with course_tracing.agent_run("chapter 11 replay"):
            with course_tracing.compaction("1-4 archive", layer="1-4"):
                for context in contexts:
                    client.chat.completions.create(model=llm.MODEL_NAME, messages=context, tools=tools)
        if state is not None:
            state.flush()  # the exporter's work counts too
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return seconds, cpu, state


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def replay_figures(rounds: int) -> None:
    import tempfile

    from course.tracing.composition import compose, divergence

    contexts, tools = replay_contexts()

    def additions():  # what the course's wrapper computes per request: composition and diff
        before = None
        for context in contexts:
            now = compose(context, tools)
            if before is not None:
                divergence(before, now)
            before = now

    additions()  # the tokenizer loaded, the first digests taken: as in a lesson, after a request
    ours = min(timed(additions) for _ in range(3))
    print(f"the course's additions alone: {ours / len(contexts) * 1e3:.2f} ms a request "
          f"(composition and first difference, {len(contexts)} requests)")
    times: dict = {"off": [], "on": []}
    cpus: dict = {"off": [], "on": []}
    with tempfile.TemporaryDirectory() as folder:
        state = None
        for round_number in range(rounds):
            for mode in (("off", "on") if round_number % 2 == 0 else ("on", "off")):
                seconds, cpu, traced = replay(contexts, tools, mode, Path(folder) / f"{round_number}")
                times[mode].append(seconds)
                cpus[mode].append(cpu)
                state = traced or state
                print(f"replay round {round_number + 1}, tracing {mode}: {seconds:.2f} s, "
                      f"{cpu:.2f} s of CPU (load {os.getloadavg()[0]:.2f})", flush=True)
        from course import tracing as course_tracing

        course_tracing.shutdown()
        os.environ.pop("COURSE_TRACE", None)
        size = state.path.stat().st_size
        print(f"the additions are {ours / min(times['off']) * 100:.1f}% of the untraced replay; "
              f"CPU time on/off (best of each): {min(cpus['on']) / min(cpus['off']):.3f}")
        print(f"replay of {len(contexts)} requests: best off {min(times['off']):.2f} s, best on "
              f"{min(times['on']):.2f} s, ratio on/off {min(times['on']) / min(times['off']):.3f}; "
              f"one traced replay wrote {size / 1024:.1f} KiB of OTLP JSON "
              f"({size / len(contexts):.0f} bytes a request), {request_spans([state.path])} "
              f"request spans")
        first = json.loads(state.path.read_text().splitlines()[0])
        sample = first["resourceSpans"][0]["scopeSpans"][0]["spans"][-1]
        print("a request span as OTLP JSON:", json.dumps(sample)[:1500])


# What a lesson's kernel has imported before tracing starts (course.llm builds its client), and
# what tracing then imports: the SDK, the official instrumentation, the OTLP JSON encoder.
KERNEL_IMPORTS = ("IPython", "ipykernel.ipkernel", "ipywidgets", "course.llm",
                  "openai.resources.chat.completions.completions", "openai.resources.embeddings")
TRACING_IMPORTS = (("the SDK", "opentelemetry.sdk.trace.export"),
                   ("the OpenAI instrumentation", "opentelemetry.instrumentation.openai_v2"),
                   ("the OTLP JSON encoder", "opentelemetry.exporter.otlp.json.common.trace_encoder"))
IMPORTER = """
import gc, importlib, sys, time
for name in sys.argv[2:]:
    importlib.import_module(name)
collecting = [0.0, 0.0]  # CPU seconds in full collections during tracing's imports; start of one
def timed(phase, info):
    if info["generation"] == 2:
        if phase == "start":
            collecting[1] = time.process_time()
        else:
            collecting[0] += time.process_time() - collecting[1]
gc.callbacks.append(timed)
start = time.process_time()
for name in sys.argv[1].split(",") if sys.argv[1] else ():
    importlib.import_module(name)
gc.callbacks.remove(timed)
print(time.process_time(), time.process_time() - start, gc.get_stats()[2]["collections"], collecting[0])
"""


def import_figures(rounds: int) -> None:
    """Tracing's fixed cost to a kernel: a fresh process imports what a lesson's kernel has, then
    the first 0, 1, 2 or 3 of TRACING_IMPORTS; per step the CPU time of the imports, of the
    process's exit (the interpreter's teardown: total CPU less the CPU before exit) and the full
    garbage collections that ran. Alternating order, median of `rounds`."""
    import subprocess

    steps = [",".join(module for _, module in TRACING_IMPORTS[:n]) for n in range(len(TRACING_IMPORTS) + 1)]
    figures: dict = {step: [] for step in steps}
    for round_number in range(rounds):
        for step in (steps if round_number % 2 == 0 else steps[::-1]):
            cpu = children_cpu()
            out = subprocess.run([sys.executable, "-c", IMPORTER, step, *KERNEL_IMPORTS], check=True,
                                 capture_output=True, text=True, cwd=ROOT).stdout.split()
            total = children_cpu() - cpu
            figures[step].append((float(out[1]), total - float(out[0]), int(out[2]), total,
                                  float(out[3])))
    median = statistics.median
    print(f"tracing's imports in a kernel (after {', '.join(KERNEL_IMPORTS)}), CPU ms, median of "
          f"{rounds} (load {os.getloadavg()[0]:.2f}):")
    base = median(f[3] for f in figures[steps[0]])
    previous = (0.0, median(f[1] for f in figures[steps[0]]), median(f[3] for f in figures[steps[0]]), 0.0)
    for (label, _), step in zip(TRACING_IMPORTS, steps[1:]):
        rows = figures[step]
        now = tuple(median(f[i] for f in rows) for i in (0, 1, 3, 4))
        print(f"  + {label:<28} import {1e3 * (now[0] - previous[0]):5.0f} (of which full garbage "
              f"collection {1e3 * (now[3] - previous[3]):3.0f}), exit {1e3 * (now[1] - previous[1]):+4.0f}, "
              f"whole process {1e3 * (now[2] - previous[2]):+5.0f}; full collections in the process "
              f"{sorted({f[2] for f in rows})}")
        previous = now
    print(f"  the process without tracing: {base:.2f} s; with all three: +{previous[2] - base:.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--replay-only", action="store_true")
    parser.add_argument("--lessons-only", action="store_true")
    parser.add_argument("--imports-only", action="store_true",
                        help="only tracing's fixed cost to a kernel: its imports and their teardown")
    args = parser.parse_args()
    if not args.lessons_only:
        import_figures(max(args.rounds, 7))
        if args.imports_only:
            return
        replay_figures(args.rounds)
    if args.replay_only:
        return
    paths = [p.resolve() for p in args.notebooks] or [ROOT / "notebooks" / name for name in LESSONS]
    print(f"load before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    figures = {kind: {(p.name, mode): [] for p in paths for mode in ("off", "on")}
               for kind in ("cpu", "wall", "cells")}
    files: dict = {p.name: [] for p in paths}
    import tempfile

    traces = Path(tempfile.mkdtemp(prefix="bench-tracing-"))
    for round_number in range(args.rounds):
        modes = ("off", "on") if round_number % 2 == 0 else ("on", "off")
        for path in paths:
            for mode in modes:
                seconds, cells, used, written = run(path, mode, traces / f"{round_number}-{path.stem}-{mode}")
                for kind, value in (("cpu", used), ("wall", seconds), ("cells", cells)):
                    figures[kind][(path.name, mode)].append(value)
                if mode == "on":
                    files[path.name] = written
                print(f"round {round_number + 1}: {path.name} tracing {mode}: {used:.2f} s CPU, "
                      f"{seconds:.2f} s wall ({cells:.2f} s in its cells) (load {os.getloadavg()[0]:.2f})",
                      flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    print(f"\nmedians of {args.rounds} rounds (spread: lowest-highest on/off of a round's pair)")
    for path in paths:
        size = sum(f.stat().st_size for f in files[path.name])
        print(f"{path.name}: last traced run wrote {size / 1024:.1f} KiB of OTLP JSON in "
              f"{len(files[path.name])} file(s), {request_spans(files[path.name])} request spans")
        for kind, label in (("cpu", "kernel CPU"), ("wall", "wall, whole run"),
                            ("cells", "wall, cells only")):
            print("  " + ratio_line(label, figures[kind][(path.name, "off")],
                                    figures[kind][(path.name, "on")]))
    import shutil

    shutil.rmtree(traces)


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"benchmark took {time.perf_counter() - started:.0f} s")
