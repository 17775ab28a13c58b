"""Tracing's share of a lesson, attributed inside one traced run (issue 49), not read off the
difference of two runs.

    python benchmarks/bench_tracing_share.py [NOTEBOOK ...] [--rounds N]

Why: on this shared 2-core machine one lesson's CPU time varies by ±20% from run to run (see
bench_tracing.py's pairs), so the difference between a traced and an untraced run cannot show a
5% cost. Here each round runs a lesson's code cells once, traced, in a fresh process (an IPython
shell, as in a kernel), and measures tracing's own CPU time in that same run:

    start     starting tracing: its imports (the SDK, the official instrumentation, the OTLP
              JSON encoder; with the garbage collections they trigger) and its set-up
    requests  per request, the caller's CPU inside tracing's wrappers (the instrumentation's
              and the course's, around openai's Completions.create) less the CPU inside
              create itself: timed with this thread's clock just inside and just outside them
    export    the exporter's thread writing the spans as OTLP JSON (to a temporary folder)

and the lesson's CPU (every thread: the teaching model's server runs in the process, as it does
in a kernel). The share is tracing's CPU over the lesson's CPU without it: the cells alone, and
the whole process (its start too: Python, IPython, openai and the course's imports, the
tokenizer: what a kernel spends before a lesson's first cell runs, about the same either way).
Both come from the same run, so a machine that is slower in one round slows both. Not counted:
the agent and
tool spans of `tracing.agent_run`/`tool_call` (a few per lesson), and the inspector's cells
(the lesson's content: with tracing off they show that it is off). The teaching model's
tokenizer is loaded before the lesson runs: untraced, its server loads it anyway; traced, the
first composition would load it and it would be counted here though it is no extra work.
Prints per round and per lesson the median and range; asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ("01_agent_loop.ipynb", "05_prompt_caching.ipynb", "11_production_compaction.ipynb")

CHILD = r"""
import json, os, sys, time
notebook, folder = sys.argv[1], sys.argv[2]
os.environ["COURSE_TRACE"] = "on"
os.environ["COURSE_TRACE_DIR"] = folder
sys.path.insert(0, os.getcwd())
from IPython.core.interactiveshell import InteractiveShell
import openai.resources.chat.completions.completions  # noqa: F401 (what a lesson's client imports)
import wrapt
import course.llm
from course.llm.template import encoding
from course.tracing import setup

encoding()  # the teaching model's tokenizer: loaded by its server in an untraced run too
shell = InteractiveShell.instance()
clock = {"inside": 0.0, "outside": 0.0, "export": 0.0, "requests": 0}

def timed(key):
    def wrapper(wrapped, instance, args, kwargs):
        start = time.thread_time()
        try:
            return wrapped(*args, **kwargs)
        finally:
            clock[key] += time.thread_time() - start
            clock["requests"] += key == "outside"
    return wrapper

# just inside tracing's wrappers: they will wrap this one
wrapt.wrap_function_wrapper("openai.resources.chat.completions", "Completions.create", timed("inside"))
make_exporter = setup.file_exporter
def counted_exporter(path):
    exporter = make_exporter(path)
    export = exporter.export
    def timed_export(spans):
        start = time.thread_time()
        try:
            return export(spans)
        finally:
            clock["export"] += time.thread_time() - start
    exporter.export = timed_export
    return exporter
setup.file_exporter = counted_exporter

clock["before"] = time.process_time()  # the process so far: Python, IPython, openai, the tokenizer
start = time.process_time()
state = setup.install()
clock["start"] = time.process_time() - start
# just outside them
wrapt.wrap_function_wrapper("openai.resources.chat.completions", "Completions.create", timed("outside"))
cells = [c for c in json.load(open(notebook))["cells"] if c["cell_type"] == "code"]
os.chdir(os.path.dirname(notebook))
start = time.process_time()
for cell in cells:
    result = shell.run_cell("".join(cell["source"]), silent=True)
    if not result.success:
        raise SystemExit(f"a cell failed: {result.error_in_exec or result.error_before_exec!r}")
state.flush()
clock["lesson"] = clock["start"] + time.process_time() - start
print(json.dumps(clock))
"""


def one_run(notebook: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-share-") as folder:
        out = subprocess.run([sys.executable, "-c", CHILD, str(notebook), folder], cwd=ROOT,
                             capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{notebook.name}: {out.stderr[-2000:]}")
    clock = json.loads(out.stdout.strip().splitlines()[-1])
    clock["requests_cpu"] = clock["outside"] - clock["inside"]
    clock["tracing"] = clock["start"] + clock["requests_cpu"] + clock["export"]
    clock["share"] = clock["tracing"] / (clock["lesson"] - clock["tracing"])
    clock["share_started"] = clock["tracing"] / (clock["before"] + clock["lesson"] - clock["tracing"])
    return clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    paths = [p.resolve() for p in args.notebooks] or [ROOT / "notebooks" / name for name in LESSONS]
    print(f"load before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    runs: dict = {p.name: [] for p in paths}
    for round_number in range(args.rounds):
        for path in paths:
            c = one_run(path)
            runs[path.name].append(c)
            print(f"round {round_number + 1}: {path.name}: lesson {c['lesson']:.2f} s CPU, tracing "
                  f"{c['tracing'] * 1e3:.0f} ms (start {c['start'] * 1e3:.0f}, {c['requests']} requests "
                  f"{c['requests_cpu'] * 1e3:.0f}, export {c['export'] * 1e3:.0f}): "
                  f"{c['share'] * 100:.1f}% of the cells, {c['share_started'] * 100:.1f}% of the process "
                  f"(load {os.getloadavg()[0]:.2f})", flush=True)
    print(f"\ntracing's CPU as a share of the lesson's CPU without it (its cells; the whole process), "
          f"median of {args.rounds} (range), and its parts' medians in ms:")
    median = statistics.median
    for name, cs in runs.items():
        shares = [c["share"] * 100 for c in cs]
        started = [c["share_started"] * 100 for c in cs]
        per_request = median(c["requests_cpu"] / max(c["requests"], 1) * 1e3 for c in cs)
        print(f"{name}: {median(shares):.1f}% of the cells ({min(shares):.1f}-{max(shares):.1f}), "
              f"{median(started):.1f}% of the process ({min(started):.1f}-{max(started):.1f}); lesson "
              f"{median(c['lesson'] for c in cs):.2f} s; start {median(c['start'] for c in cs) * 1e3:.0f}, "
              f"requests {median(c['requests_cpu'] for c in cs) * 1e3:.0f} "
              f"({cs[0]['requests']} requests, {per_request:.2f} ms each), "
              f"export {median(c['export'] for c in cs) * 1e3:.0f}")


if __name__ == "__main__":
    main()
