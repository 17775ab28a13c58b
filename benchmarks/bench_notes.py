"""NoteTool at 1,000 and 10,000 notes: create, update and search, against the JSON index.

    python benchmarks/bench_notes.py                 # both sizes, both designs
    python benchmarks/bench_notes.py --sizes 1000    # a quicker run

Setup writes synthetic notes (mixed Chinese and English, 20-150 words, six types) straight to
disk (lesson_support.notes_scenario.write_synthetic_notes, the lesson's too). Each design then opens its own copy of the folder, which builds its
index from the files (timed as "open"), and is timed on:

- create: one new note (20 times);
- update: the content of a random existing note (20 times);
- search: 8 queries (Chinese, English, mixed), 3 rounds, top 10 each (after one first search,
  printed apart, that meets cold caches).

Designs: "sqlite" is `solutions.notes.NoteTool` (the SQLite index); "json" is
`lesson_support.specimens.json_index_notes.JsonIndexNoteTool` (the first design: the whole
index.json rewritten on every write, every note file checked on every search).

Figures are wall-clock times on this machine: compare the two designs and the two sizes with
each other, not with another machine. The load average is printed with them.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a clone without installing

from lesson_support.notes_scenario import SYNTHETIC_QUERIES as QUERIES  # noqa: E402
from lesson_support.notes_scenario import write_synthetic_notes as write_notes  # noqa: E402
from lesson_support.specimens.json_index_notes import JsonIndexNoteTool  # noqa: E402
from solutions.notes import NoteTool  # noqa: E402

DESIGNS = {"sqlite": NoteTool, "json": JsonIndexNoteTool}


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def figures(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:7.1f} ms, max {max(values) * 1000:7.1f} ms"


def measure(design: str, folder: Path, n: int) -> dict:
    start = time.perf_counter()
    tool = DESIGNS[design](folder)  # opening builds the index from the files (sqlite: at once,
    tool.list()                     # json: at the first call)
    opened = time.perf_counter() - start
    rng = random.Random(5)
    first = timed(lambda: tool.search("冷启动 first query"))  # caches still cold
    searches = [timed(lambda q=q: tool.search(q)) for _ in range(3) for q in QUERIES]
    creates = [timed(lambda: tool.create("new note", "交叉编译 zlib", "action")) for _ in range(20)]
    targets = [f"note-{rng.randint(1, n):04d}" for _ in range(20)]
    updates = [timed(lambda i=i: tool.update(i, content="更新：zlib 已交叉编译 updated")) for i in targets]
    return {"open": opened, "first": first, "create": creates, "update": updates,
            "search": searches}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--designs", nargs="+", choices=list(DESIGNS), default=list(DESIGNS))
    args = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average at the start: {load} on {os.cpu_count()} CPUs")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / "notes"
            setup = timed(lambda: write_notes(source, n))
            print(f"\n{n:,} notes (written in {setup:.1f} s)")
            for design in args.designs:
                folder = Path(tmp) / design
                shutil.copytree(source, folder)
                result = measure(design, folder, n)
                print(f"  {design:6s} open (index built from the files): {result['open']:.2f} s; "
                      f"first search {result['first'] * 1000:.1f} ms")
                for action in ("create", "update", "search"):
                    print(f"  {design:6s} {action:6s} {figures(result[action])}")
    print(f"\nload average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
