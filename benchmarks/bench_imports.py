"""What `import nbformat` costs a fresh process, and pytest's start-up, with jsonschema's IRI
parser imported eagerly (as installed) and deferred by `course.fast_imports` (issue 35 item 3).
Each variant runs in fresh subprocesses, the variants taking turns; CPU seconds of the child
(user + system), so the other work on a shared machine does not swamp the figures. Prints
figures; asserts nothing.

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
# Collecting one small test file: what every pytest run pays before its first test.
PYTEST_ARGS = ["-m", "pytest", "--co", "-q", "tests/answers/test_tokens_requests.py"]


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


def pytest_figures(runs: int) -> None:
    variants = {"as configured": PYTEST_ARGS,
                "-p course.fast_imports": PYTEST_ARGS[:2] + ["-p", "course.fast_imports"]
                + PYTEST_ARGS[2:]}
    times = {name: [] for name in variants}
    for _ in range(runs):
        for name, args in variants.items():
            times[name].append(child_cpu(args)[0])
    print(f"\npytest start-up (collect one test file), CPU seconds of the whole process "
          f"(median of {runs}):")
    for name, values in times.items():
        print(f"  {name:<24} {statistics.median(values):>7.3f}")
    first, second = (statistics.median(v) for v in times.values())
    print(f"  with the plugin / without = {second / first:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    nbformat_figures(options.runs)
    pytest_figures(options.runs)
