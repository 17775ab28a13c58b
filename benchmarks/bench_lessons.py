"""What a student waits for: each lesson run as Run All does, with every slow cell's time.

    python benchmarks/bench_lessons.py [NOTEBOOK ...] [--over SECONDS]

Runs each notebook (default: notebooks/*.ipynb) in a fresh kernel with nbclient, in the
notebook's folder, and prints the cells that took longer than --over seconds (default 2), the
notebook's total and the kernel's start (the floor no cell can remove). Nothing is written back.
Times depend on the machine and its load: run it on a quiet machine before comparing.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a clone without installing


def first_line(source: str) -> str:
    lines = [line for line in source.splitlines() if line.strip() and not line.startswith("#")]
    text = lines[0].strip() if lines else "(comment only)"
    return text if len(text) <= 60 else text[:57] + "..."


def time_notebook(path: Path, timeout: int = 600) -> tuple[float, float, list[tuple[int, float, str]]]:
    """(kernel start seconds, total seconds, [(cell index, seconds, first line)]) for one run."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    cells = []
    client.reset_execution_trackers()
    start = time.perf_counter()
    with client.setup_kernel():
        client.wait_for_reply(client.kc.kernel_info())  # the kernel answers: it has started
        started = time.perf_counter() - start
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            before = time.perf_counter()
            client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
            cells.append((index, time.perf_counter() - before, first_line(cell.source)))
    return started, time.perf_counter() - start, cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--over", type=float, default=2.0, help="show cells slower than this")
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    rows = []
    for path in paths:
        started, total, cells = time_notebook(path.resolve())
        rows.append((path.name, started, total))
        print(f"{path.name}: {total:.1f} s in all, kernel start {started:.1f} s")
        for index, seconds, line in cells:
            if seconds > args.over:
                print(f"  cell {index:3d} {seconds:6.1f} s  {line}")
        sys.stdout.flush()
    print(f"\n{'notebook':40s} {'total':>8s} {'kernel':>8s}")
    for name, started, total in rows:
        print(f"{name:40s} {total:7.1f}s {started:7.1f}s")


if __name__ == "__main__":
    main()
