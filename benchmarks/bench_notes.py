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

    python benchmarks/bench_notes.py --growth        # update, delete, summary: old vs new

`--growth` (issue 35, item 4) times update, delete and summary at 1,000, 10,000 and 100,000
notes for today's NoteTool and for the one before the fix (solutions/notes at OLD_COMMIT, loaded
from git into a temporary package), in the same run, the two taking turns call by call so a busy
machine slows both alike. It prints the median per call, old / new, and each design's growth
from the smallest size: an action that touches one note's rows should barely grow (target: under
x1.5 from 1k to 100k), and summary should not grow with the folder (it reads kept counts). Last,
each version's growth with every step of 10x the notes (1.0: the work of one note; 10.0:
linear in the folder). Update and delete are mostly the fsyncs of the note file and its index
commit: their wall-clock times move with the disk. Every figure is printed twice, in wall-clock
time and in CPU time (this process's, which waiting for the disk does not count: the work that
can grow with the folder). tests/solutions/test_notes_scaling.py checks the work itself (SQLite's
steps, the query plans) without the clock. Summary's steps are the same at every size; what is
left of its growth (a fraction of a millisecond) is memory that the old design's full scans, run
in between, pushed out of the CPU's caches.
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
from benchmarks.timing import package_at  # noqa: E402

DESIGNS = {"sqlite": NoteTool, "json": JsonIndexNoteTool}
ROOT = Path(__file__).resolve().parents[1]
OLD_COMMIT = "43fe1a3"  # before issue 35's fix: tags found by (tag, rid), summary counted every note
GROWTH_SIZES = [1_000, 10_000, 100_000]
GROWTH_CALLS = 30  # calls of update and of delete per size and design (summary: a third)


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


# --------------------------------------------------------------------------- --growth

def linked_copy(source: Path, folder: Path) -> None:
    """A copy of a folder of notes made of hard links (fast at 100k files, and safe: NoteTool
    replaces a note file by renaming a new one over it, never writes into it)."""
    shutil.copytree(source, folder, copy_function=os.link)


def growth_row(tools: dict, n: int, calls: int) -> dict:
    """Median seconds per update, delete and summary for each tool, the tools taking turns:
    {(tool, action, "wall" or "cpu"): seconds}."""
    rng = random.Random(7)
    picked = rng.sample(range(1, n + 1), 2 * calls)
    updates, deletes = picked[:calls], picked[calls:]
    times = {(name, action): [] for name in tools for action in ACTIONS}

    def turn(action, call):
        for name, tool in tools.items():
            cpu = time.process_time()
            wall = timed(lambda: call(tool))
            times[name, action].append((wall, time.process_time() - cpu))

    for number in updates:  # new content and new tags: every row of the note is replaced
        turn("update", lambda t, i=f"note-{number:04d}": t.update(
            i, content="更新：zlib 已交叉编译 updated", tags=["zlib", "updated"]))
    for number in deletes:
        turn("delete", lambda t, i=f"note-{number:04d}": t.delete(i))
    for _ in range(max(calls // 3, 3)):
        turn("summary", lambda t: t.summary())
    return {(name, action, clock): statistics.median(v[k] for v in values)
            for (name, action), values in times.items() for k, clock in enumerate(CLOCKS)}


ACTIONS = ("update", "delete", "summary")
CLOCKS = ("wall", "cpu")


def report(rows: dict, sizes: list[int], names: list[str], commits: list[str], clock: str) -> None:
    """One clock's medians: per call, old / now, growth from the smallest size and per step."""
    first = rows[sizes[0]]
    print(f"\n{clock} time per call:\n{'action':8} {'notes':>8} "
          + " ".join(f"{name:>10}" for name in names)
          + "   " + " ".join(f"{name + '/now':>12}" for name in commits)
          + "   growth from " + f"{sizes[0]:,}: " + " ".join(f"{name:>8}" for name in names))
    for action in ACTIONS:
        for n in sizes:
            row = rows[n]
            print(f"{action:8} {n:>8,} "
                  + " ".join(f"{row[name, action, clock] * 1000:>7.2f} ms" for name in names)
                  + "   " + " ".join(f"{row[name, action, clock] / row['now', action, clock]:>11.1f}x"
                                     for name in commits)
                  + " " * (15 + len(f"{sizes[0]:,}"))
                  + " ".join(f"{row[name, action, clock] / first[name, action, clock]:>7.2f}x"
                             for name in names))
    steps = list(zip(sizes, sizes[1:]))
    print(f"{clock} time, growth with each step (1.0: the work of one note; 10.0: linear in the "
          "folder):")
    print(f"{'action':8} {'version':>10} " + " ".join(f"{f'{a:,} -> {b:,}':>18}" for a, b in steps))
    for action in ACTIONS:
        for name in names:
            print(f"{action:8} {name:>10} " + " ".join(
                f"{rows[b][name, action, clock] / rows[a][name, action, clock]:>17.2f}x"
                for a, b in steps))


def growth(sizes: list[int], calls: int, also: list[str]) -> None:
    commits = [OLD_COMMIT, *also]
    print(f"update, delete and summary: NoteTool at {', '.join(commits)} and now; median of "
          f"{calls} calls (summary {max(calls // 3, 3)}), the designs taking turns")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        makers = {commit: package_at(commit, "solutions/notes", Path(tmp) / "code",
                                     f"notes_{commit}").NoteTool for commit in commits}
        makers["now"] = NoteTool
        for n in sizes:
            source = Path(tmp) / f"notes-{n}"
            setup = timed(lambda: write_notes(source, n))
            tools, opened = {}, []
            for name, make in makers.items():
                folder = Path(tmp) / f"{name}-{n}"
                linked_copy(source, folder)
                opened.append(f"{timed(lambda: tools.__setitem__(name, make(folder))):.1f} s ({name})")
            print(f"{n:>8,} notes written in {setup:.1f} s; index built in {', '.join(opened)}",
                  flush=True)
            rows[n] = growth_row(tools, n, calls)
            for name, tool in tools.items():
                tool.index.close()
                shutil.rmtree(Path(tmp) / f"{name}-{n}")
            shutil.rmtree(source)
    for clock in CLOCKS:
        report(rows, sizes, list(makers), commits, clock)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--designs", nargs="+", choices=list(DESIGNS), default=list(DESIGNS))
    parser.add_argument("--growth", action="store_true",
                        help="update, delete and summary at 1k/10k/100k notes, old vs new")
    parser.add_argument("--calls", type=int, default=GROWTH_CALLS)
    parser.add_argument("--also", nargs="*", default=[], metavar="COMMIT",
                        help="with --growth: more past versions to time beside OLD_COMMIT")
    args = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average at the start: {load} on {os.cpu_count()} CPUs")
    if args.growth:
        growth(args.sizes if "--sizes" in sys.argv else GROWTH_SIZES, args.calls, args.also)
        print(f"\nload average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
        return
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
