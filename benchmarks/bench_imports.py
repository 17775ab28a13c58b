"""What `import nbformat` costs a fresh process, and the start-up of pytest and of the grader,
with jsonschema's IRI parser imported eagerly (as installed) and deferred by
`course.fast_imports` (issue 35 item 3). Each variant runs in fresh subprocesses, the variants
taking turns; CPU seconds of the child (user + system), so the other work on a shared machine
does not swamp the figures. Prints figures; asserts nothing.

The course defers the parser everywhere (`course/__init__`, the first plugin in pytest's
addopts, the grader's nbval runs), so the eager baseline imports `rfc3987_syntax` before
anything else: `course.fast_imports` then finds it loaded and leaves it, as without the fix.

    python benchmarks/bench_imports.py [--runs 5]
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# A child that imports nbformat, validates one notebook, and reports both times (CPU seconds).
IMPORT_AND_VALIDATE = """
import json, sys, time
start = time.process_time()
if sys.argv[1] == "deferred":
    import course.fast_imports
import nbformat
imported = time.process_time()
nbformat.validate(nbformat.reads(open(sys.argv[2], encoding="utf-8").read(), as_version=4))
validated = time.process_time()
print(json.dumps({"import": imported - start, "validate": validated - imported,
                  "parser loaded": "rfc3987_syntax.syntax_helpers" in sys.modules}))
"""
NOTEBOOK = ROOT / "notebooks" / "02_counting_tokens.ipynb"
# A command run as `python -m MODULE ARGS`, with the IRI parser loaded first ("eager") or left
# to the course ("deferred").
RUN_MODULE = """
import runpy, sys
if sys.argv[1] == "eager":
    import rfc3987_syntax
module, sys.argv = sys.argv[2], sys.argv[2:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""
STARTS = {
    # Collecting one small test file: what every pytest run pays before its first test (the
    # grader's nbval runs included).
    "pytest --co (one test file)": ["pytest", "--co", "-q", "tests/solutions/test_tokens_requests.py"],
    "python -m course.grade --help": ["course.grade", "--help"],
}


def child_cpu(args: list[str]) -> tuple[float, str]:
    """CPU seconds (user + system) a child process used, and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 5):  # 5: pytest collected nothing
        raise RuntimeError(f"{' '.join(args[:3])} failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout


def nbformat_figures(runs: int) -> None:
    rows = {"eager": [], "deferred": []}
    for _ in range(runs):
        for variant, values in rows.items():
            _, out = child_cpu(["-c", IMPORT_AND_VALIDATE, variant, str(NOTEBOOK)])
            values.append(json.loads(out.strip().splitlines()[-1]))
    print(f"import nbformat + first validate of {NOTEBOOK.name}, CPU seconds "
          f"(median of {runs} fresh processes):")
    print(f"  {'IRI parser':<10} {'import':>8} {'validate':>9} {'parser built':>13}")
    medians = {}
    for variant, values in rows.items():
        imp = statistics.median(v["import"] for v in values)
        val = statistics.median(v["validate"] for v in values)
        medians[variant] = imp + val
        built = "yes" if all(v["parser loaded"] for v in values) else "no"
        print(f"  {variant:<10} {imp:>8.3f} {val:>9.3f} {built:>13}")
    print(f"  import + validate: deferred / eager = "
          f"{medians['deferred'] / medians['eager']:.2f}")


def start_figures(runs: int) -> None:
    times = {(name, variant): [] for name in STARTS for variant in ("eager", "deferred")}
    for _ in range(runs):
        for (name, variant), values in times.items():
            values.append(child_cpu(["-c", RUN_MODULE, variant, *STARTS[name]])[0])
    print(f"\nstart-up, CPU seconds of the whole process (median of {runs} fresh processes):")
    print(f"  {'command':<30} {'eager':>7} {'deferred':>9} {'deferred / eager':>17}")
    for name in STARTS:
        eager, deferred = (statistics.median(times[name, v]) for v in ("eager", "deferred"))
        print(f"  {name:<30} {eager:>7.3f} {deferred:>9.3f} {deferred / eager:>17.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    nbformat_figures(options.runs)
    start_figures(options.runs)
