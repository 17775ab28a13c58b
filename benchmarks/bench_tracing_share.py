"""Tracing's cost to a lesson, measured in one process per run, where the machine's noise is
small (issue 49).

    python benchmarks/bench_tracing_share.py [NOTEBOOK ...] [--rounds N]

Why: on this shared 2-core machine a lesson's kernel varies by ±20% in CPU time from run to run
(bench_tracing.py's pairs), too much to show a 5% cost. Here each run is a fresh Python process
that imports what a lesson's kernel has (IPython, ipykernel, ipywidgets, openai, course.llm, the
teaching model's tokenizer), then runs the lesson's code cells in an IPython shell, traced or
not (COURSE_TRACE), alternating. Two figures:

    marginal    the whole process's CPU time (every thread: the teaching model's server runs in
                it, as in a kernel), traced over untraced: what tracing adds, all effects
                included (its imports less what the lesson would import anyway, garbage
                collections it brings forward, its work per request, the exporter's thread).
                Median of the rounds, with the lowest and highest ratio of a round's pair.
    attributed  in the traced runs, tracing's own CPU: its start (imports and set-up), per
                request the caller's CPU inside its wrappers (the instrumentation's and the
                course's, around openai's Completions.create) less that inside create, and the
                exporter's thread; an upper bound, since some of what its start imports the
                lesson imports later anyway. Of the requests' part, counting tokens is moved
                work rather than added: tracing counts a request's pieces just before the
                teaching model's server encodes the same pieces, and the encoding is kept
                (course/llm/template.piece_ids), so the server finds them done; the figure
                without it is the one a lesson on the teaching model pays.

Not measured here: a kernel's messaging and the widgets' state sent to a browser (the inspector
shows more with tracing on). The tokenizer is loaded before the lesson in both modes: untraced,
the teaching model's server loads it; traced, the first composition does (the same work).
Prints per round and per lesson; asserts nothing.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tracing import LESSONS  # noqa: E402 (the same three lessons)

CHILD = r"""
import contextlib, io, json, os, sys, time
notebook, folder, mode = sys.argv[1], sys.argv[2], sys.argv[3]
os.environ["COURSE_TRACE"] = mode
os.environ["COURSE_TRACE_DIR"] = folder
sys.path.insert(0, os.getcwd())
from IPython.core.interactiveshell import InteractiveShell
import ipykernel.ipkernel, ipywidgets  # noqa: F401 (what a lesson's kernel has imported)
import openai.resources.chat.completions.completions  # noqa: F401
import wrapt
import course.llm
from course.llm.template import encoding
from course.tracing import setup

encoding()  # the teaching model's tokenizer: its server loads it untraced, tracing traced
shell = InteractiveShell.instance()
clock = {"inside": 0.0, "outside": 0.0, "export": 0.0, "counting": 0.0, "requests": 0}

def timed(key):
    def wrapper(wrapped, instance, args, kwargs):
        start = time.thread_time()
        try:
            return wrapped(*args, **kwargs)
        finally:
            clock[key] += time.thread_time() - start
            clock["requests"] += key == "outside"
    return wrapper

# just inside tracing's wrappers (they will wrap this one); the same timers untraced
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

from course.tracing import composition
count_tokens = composition._counted
def timed_count(key, count):
    start = time.thread_time()
    try:
        return count_tokens(key, count)
    finally:
        clock["counting"] += time.thread_time() - start
composition._counted = timed_count

start = time.process_time()
state = setup.install()  # None untraced
clock["start"] = time.process_time() - start
wrapt.wrap_function_wrapper("openai.resources.chat.completions", "Completions.create", timed("outside"))
cells = [c for c in json.load(open(notebook))["cells"] if c["cell_type"] == "code"]
os.chdir(os.path.dirname(notebook))
with contextlib.redirect_stdout(io.StringIO()):
    for cell in cells:
        result = shell.run_cell("".join(cell["source"]), silent=True)
        if not result.success:
            raise SystemExit(f"a cell failed: {result.error_in_exec or result.error_before_exec!r}")
if state is not None:
    state.flush()
clock["process"] = time.process_time()
print(json.dumps(clock))
"""


def one_run(notebook: Path, mode: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-share-") as folder:
        out = subprocess.run([sys.executable, "-c", CHILD, str(notebook), folder, mode], cwd=ROOT,
                             capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{notebook.name}: {out.stderr[-2000:]}")
    clock = json.loads(out.stdout.strip().splitlines()[-1])
    clock["requests_cpu"] = clock["outside"] - clock["inside"]
    clock["tracing"] = clock["start"] + clock["requests_cpu"] + clock["export"]
    clock["net"] = clock["tracing"] - clock["counting"]
    return clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    paths = [p.resolve() for p in args.notebooks] or [ROOT / "notebooks" / name for name in LESSONS]
    print(f"load before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    runs: dict = {(p.name, mode): [] for p in paths for mode in ("off", "on")}
    for round_number in range(args.rounds):
        for path in paths:
            for mode in (("off", "on") if round_number % 2 == 0 else ("on", "off")):
                c = one_run(path, mode)
                runs[(path.name, mode)].append(c)
                line = f"round {round_number + 1}: {path.name} tracing {mode}: process {c['process']:.2f} s CPU"
                if mode == "on":
                    line += (f"; tracing's own {c['tracing'] * 1e3:.0f} ms (start {c['start'] * 1e3:.0f}, "
                             f"{c['requests']} requests {c['requests_cpu'] * 1e3:.0f} of which counting "
                             f"tokens {c['counting'] * 1e3:.0f}, export {c['export'] * 1e3:.0f})")
                print(line + f" (load {os.getloadavg()[0]:.2f})", flush=True)
    median = statistics.median
    print(f"\nmedians of {args.rounds} rounds; marginal: the whole process's CPU traced over untraced "
          f"(lowest-highest ratio of a round's pair); attributed: tracing's own CPU over the untraced "
          f"process (an upper bound)")
    for path in paths:
        off, on = runs[(path.name, "off")], runs[(path.name, "on")]
        pairs = sorted(b["process"] / a["process"] for a, b in zip(off, on))
        base = median(c["process"] for c in off)
        per_request = median(c["requests_cpu"] / max(c["requests"], 1) * 1e3 for c in on)
        print(f"{path.name}: process off {base:.2f} s, on {median(c['process'] for c in on):.2f} s: "
              f"marginal {median(c['process'] for c in on) / base:.3f} (pairs {pairs[0]:.3f}-{pairs[-1]:.3f}); "
              f"attributed {median(c['tracing'] for c in on) / base * 100:.1f}%, "
              f"{median(c['net'] for c in on) / base * 100:.1f}% without counting tokens (start "
              f"{median(c['start'] for c in on) * 1e3:.0f} ms, {on[0]['requests']} requests "
              f"{median(c['requests_cpu'] for c in on) * 1e3:.0f} ms, {per_request:.2f} ms each, of "
              f"which counting tokens {median(c['counting'] for c in on) * 1e3:.0f} ms; export "
              f"{median(c['export'] for c in on) * 1e3:.0f} ms)")


if __name__ == "__main__":
    main()
