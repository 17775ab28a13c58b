"""NoteTool search over 10,000 notes: time per query.

    python benchmarks/bench_notes.py

Setup writes 10,000 synthetic notes (mixed Chinese and English, 20-150 words, six types)
straight to disk with `render_note`, then opens the folder with NoteTool, which finds no
index and rebuilds it from the files (timed). Then:

- first search: parses every note file once (the tool keeps parsed notes until a file changes);
- search: later queries (Chinese, English, mixed), each of which still checks every file's
  size and modification time, so notes changed by another process are never missed;
- filtered search: the same with a type filter (only matching files are touched);
- create: adding one note to the 10,000 (rewrites the JSON index, so it grows with the folder).

Figures depend on the machine (and on its disk for setup and create).
"""
from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a clone without installing

from solutions.notes import NOTE_TYPES, Note, NoteTool, render_note  # noqa: E402

N_NOTES = 10_000
QUERIES = ["为什么链接时找不到 zlib", "undefined reference to inflate", "交叉编译 工具链 aarch64",
           "cmake toolchain sysroot", "主机的库 host library", "下一步 测试", "qemu test suite",
           "静态库 libz.a 路径"]
ENGLISH = ("the build links libpng against zlib and cmake finds the host library instead of the "
           "target sysroot so the linker reports undefined reference to inflate while the "
           "toolchain file sets aarch64 compiler flags and the test suite runs under qemu").split()
CHINESE = ["交叉编译", "链接", "找不到", "目标平台", "主机", "库", "工具链", "头文件", "配置",
           "编译选项", "静态库", "动态库", "测试", "路径", "缓存", "依赖", "版本", "错误", "下一步"]
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone(timedelta(hours=8)))


def write_notes(folder: Path, n: int, seed: int = 11) -> None:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(1, n + 1):
        words = [rng.choice(ENGLISH) if rng.random() < 0.6 else rng.choice(CHINESE)
                 for _ in range(rng.randint(20, 150))]
        when = T0 + timedelta(minutes=rng.randint(0, 60 * 24 * 60))
        note = Note(f"note-{i:05d}", " ".join(words[:6]), rng.choice(NOTE_TYPES),
                    tuple(rng.sample(["zlib", "cmake", "link", "toolchain", "test"], 2)),
                    when, when, " ".join(words))
        (folder / f"{note.id}.md").write_text(render_note(note), encoding="utf-8")


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "notes"
        setup, _ = timed(lambda: write_notes(folder, N_NOTES))
        tool = NoteTool(folder)
        rebuild, summary = timed(tool.summary)  # the first operation finds no index: rebuild
        assert summary["total"] == N_NOTES, summary["total"]
        first, hits = timed(lambda: tool.search(QUERIES[0]))
        times, found = [], []
        for _ in range(3):
            for q in QUERIES:
                t, hits = timed(lambda: tool.search(q))
                times.append(t)
                found.append(len(hits))
        filtered = [timed(lambda: tool.search(q, type="blocker"))[0] for q in QUERIES]
        creates = [timed(lambda: tool.create("new note", "交叉编译 zlib", "action"))[0]
                   for _ in range(5)]

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average while measuring: {load} on {os.cpu_count()} CPUs\n")
    print(f"setup: wrote {N_NOTES:,} note files in {setup:.2f} s")
    print(f"index rebuilt from the files (first operation): {rebuild:.2f} s")
    print(f"first search (parses every note once): {first * 1000:.0f} ms")
    print(f"search, {len(times)} queries: median {statistics.median(times) * 1000:.1f} ms, "
          f"max {max(times) * 1000:.1f} ms per query (top-10 results each: {min(found)}-{max(found)})")
    print(f"search filtered to one type: median {statistics.median(filtered) * 1000:.1f} ms per query")
    print(f"create one note among {N_NOTES:,}: median {statistics.median(creates) * 1000:.1f} ms "
          "(rewrites the JSON index)")


if __name__ == "__main__":
    main()
