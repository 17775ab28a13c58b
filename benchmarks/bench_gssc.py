"""How fast the GSSC pipeline builds a context, and how that grows with the candidates.

    python benchmarks/bench_gssc.py

Target (issue 5): 10,000 candidate packets, 8,000-token budget, under 0.5 s per build.
Target (issue 35 item 2): linear growth up to 100,000 packets.
Candidates are synthetic, mixed Chinese and English, 10-120 words each, spread over 30 days.
Printed, for 1,000 to 100,000 candidates:

- make: building the Packets, which counts each one's tokens exactly and extracts its terms
  (done once per packet, however many builds follow);
- 1st build: the first build_context over those packets;
- warm build: later builds over the same packets (what an agent loop pays per step when its
  candidates persist), with its split into select / structure + compress;
- per packet: the warm build divided by the packets (flat means linear growth);
- growth: against the previous size (10x more candidates -> about 10x the time means linear;
  sorting adds a log factor);
- the same warm build with earlier code, measured in the same run, each version loaded from git
  into a temporary package and timed with only its own packets alive (the garbage collector's
  work depends on what is): OLD_COMMIT, before issue 35 item 2, BASE_COMMIT, its first fix
  (term dicts the collector does not walk, a float sort key), and RANKED_COMMIT, the last that
  sorted every candidate before the fill (and broke every tie: with 10x the packets there are
  far more than 10x the ties); then old / new;
- last, the growth factors of every version side by side (10.0 per step is linear).

Best of a few runs, in CPU time (this process's own, so other work on a shared machine slows
it less than it would the wall clock; the garbage collector's time counts); figures depend on
the machine, compare the ratios.
"""
from __future__ import annotations

import gc
import os
import random
import sys
import tempfile
import time
import timeit
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a clone without installing

from solutions.gssc import (DEFAULT_OUTPUT, ContextConfig, Packet, build_context,  # noqa: E402
                            compress, explain_selection, mandatory_tokens)

# solutions/gssc before issue 35 item 2 (a frozenset of terms per packet, a tuple key per row).
OLD_COMMIT = "affcbb9908ae0b64480281d7b9dee47ad111502e"
# Its first fix (terms as the keys of a dict of strings, a float sort key, one Row per packet).
BASE_COMMIT = "eabffdc2a61545dd75d4f438b9c49395dfc285cc"
# The last that ranked every candidate before the fill (a full sort, every tie broken).
RANKED_COMMIT = "69b3acc3e8700f2c7368ac6800d050ed8f36bd1d"
REFERENCES = {"before 35": OLD_COMMIT, "1st fix": BASE_COMMIT, "full ranking": RANKED_COMMIT}
SIZES = (1_000, 10_000, 100_000)
CONFIG = ContextConfig(budget=8000, reserve=1000)
TASK = "为什么链接 libpng 时报 undefined reference to inflate？zlib 是不是用了主机的库"
ENGLISH = ("the build links libpng against zlib and cmake finds the host library instead of the "
           "target sysroot so the linker reports undefined reference to inflate while the "
           "toolchain file sets aarch64 compiler flags and the test suite runs under qemu").split()
CHINESE = ["交叉编译", "链接", "找不到", "目标平台", "主机", "库", "工具链", "头文件", "配置",
           "编译选项", "静态库", "动态库", "测试", "路径", "缓存", "依赖", "版本", "错误"]
T0 = datetime(2025, 3, 3, 12, 0, tzinfo=timezone(timedelta(hours=8)))


def synthetic_records(n: int, seed: int = 5) -> list[tuple]:
    """(content, source, timestamp, priority) for a policy and n candidates."""
    rng = random.Random(seed)
    sources = ["history", "notes", "docs", "tools"]
    records = [("You are a build engineer. Never link host libraries.", "system", T0, 1.0)]
    for _ in range(n):
        words = [rng.choice(ENGLISH) if rng.random() < 0.6 else rng.choice(CHINESE)
                 for _ in range(rng.randint(10, 120))]
        records.append((" ".join(words), rng.choice(sources),
                        T0 - timedelta(minutes=rng.randint(0, 30 * 24 * 60)),
                        1.5 if rng.random() < 0.02 else 1.0))
    return records


def synthetic_packets(n: int, seed: int = 5, packet=Packet) -> list:
    return [packet(content, source, when, priority=priority)
            for content, source, when, priority in synthetic_records(n, seed)]


def gssc_at(commit: str, folder: Path, name: str = "gssc_old") -> ModuleType:
    """solutions/gssc as it was at `commit`, imported as package `name` (see timing.package_at).
    Where that commit has chapter 03's givens (course/givens/gssc: Packet, the terms), they are
    loaded from it too, as `name`_givens, and the old answers import them instead of today's."""
    from benchmarks.timing import git, package_at

    try:
        git("cat-file", "-e", f"{commit}:course/givens/gssc/__init__.py")
    except LookupError:  # before the givens moved out of solutions/gssc
        return package_at(commit, "solutions/gssc", folder, name)
    givens = package_at(commit, "course/givens/gssc", folder, f"{name}_givens")
    aliases = {"course.givens.gssc" + key[len(givens.__name__):]: module
               for key, module in list(sys.modules.items())
               if key == givens.__name__ or key.startswith(givens.__name__ + ".")}
    saved = {key: sys.modules.get(key) for key in aliases}
    sys.modules.update(aliases)  # while the old answers are imported, they find the old givens
    try:
        return package_at(commit, "solutions/gssc", folder, name)
    finally:
        for key, module in saved.items():
            if module is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = module


def best_time(fn, repeats: int) -> float:
    """The least CPU time of `repeats` calls of fn(), the garbage collector on (timeit turns it
    off unless told)."""
    return min(timeit.repeat(fn, setup="gc.enable()", timer=time.process_time, repeat=repeats,
                             number=1, globals={"gc": gc}))


def warm_build(gssc, n: int, repeats: int) -> float:
    """The best warm build over n packets made by `gssc` (today's package or an old one), with
    nothing else's packets alive: the garbage collector's work depends on what is."""
    packets = synthetic_packets(n, packet=gssc.Packet)
    gssc.build_context(TASK, packets, CONFIG)
    return best_time(lambda: gssc.build_context(TASK, packets, CONFIG), repeats)


def measure(n: int, references: dict) -> dict:
    gc.collect()
    start = time.perf_counter()
    packets = synthetic_packets(n)
    make = time.perf_counter() - start
    start = time.perf_counter()
    built = build_context(TASK, packets, CONFIG)
    cold = time.perf_counter() - start
    assert built.tokens <= CONFIG.limit
    repeats = 5 if n <= 10_000 else 3
    warm = best_time(lambda ps=packets: build_context(TASK, ps, CONFIG), repeats)
    pinned = [p for p in packets if p.pinned]
    room = CONFIG.limit - mandatory_tokens(TASK, pinned)
    select = best_time(lambda ps=packets[1:]: explain_selection(ps, TASK, room, CONFIG), repeats)
    chosen = built.chosen
    finish = best_time(lambda ps=chosen: compress(TASK, ps, DEFAULT_OUTPUT, CONFIG.limit), repeats)
    picked = sum(r.status == "selected" for r in built.rows)
    del packets, built, chosen, pinned
    before = {}
    for label, gssc in references.items():
        gc.collect()
        before[label] = warm_build(gssc, n, repeats)
    gc.collect()
    return {"n": n, "make": make, "cold": cold, "warm": warm, "select": select, "finish": finish,
            "before": before, "picked": picked}


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        references = {label: gssc_at(commit, Path(folder), f"gssc_{commit[:7]}")
                      for label, commit in REFERENCES.items()}
        rows = [measure(n, references) for n in SIZES]
    diverse_packets = synthetic_packets(10_000)
    build_context(TASK, diverse_packets, CONFIG)
    diverse_cfg = ContextConfig(budget=8000, reserve=1000, diversity=0.5)
    diverse = best_time(lambda: build_context(TASK, diverse_packets, diverse_cfg), 3)

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average while measuring: {load} on {os.cpu_count()} CPUs\n")
    print(f"budget {CONFIG.budget:,} tokens, reserve {CONFIG.reserve:,} (context limit {CONFIG.limit:,})\n")
    print(f"{'packets':>8} {'make':>8} {'1st build':>10} {'warm build':>10} {'per packet':>11} "
          f"{'growth':>6} {'select':>8} {'struct+compress':>15} {'selected':>8}")
    previous = None
    for r in rows:
        growth = f"{r['warm'] / previous['warm']:6.1f}" if previous else " " * 6
        print(f"{r['n']:>8,} {r['make']:>6.2f} s {r['cold']:>8.3f} s {r['warm']:>8.3f} s "
              f"{r['warm'] / r['n'] * 1e6:>8.2f} us {growth} {r['select']:>6.3f} s "
              f"{r['finish']:>13.3f} s {r['picked']:>8,}")
        previous = r
    for label, commit in REFERENCES.items():
        print(f"\nthe same warm build with the code {label} ({commit[:7]}), same run:")
        print(f"{'packets':>8} {'warm build':>10} {'per packet':>11} {'growth':>6} {'old/new':>8}")
        previous = None
        for r in rows:
            old = r["before"][label]
            growth = f"{old / previous:6.1f}" if previous else " " * 6
            print(f"{r['n']:>8,} {old:>8.3f} s {old / r['n'] * 1e6:>8.2f} us {growth} "
                  f"{old / r['warm']:>7.2f}x")
            previous = old
    ten = next(r for r in rows if r["n"] == 10_000)
    verdict = "meets" if max(ten["warm"], ten["cold"]) < 0.5 else "misses"
    print(f"\n10,000 candidates, 8,000-token budget: first build {ten['cold']:.3f} s, "
          f"later builds {ten['warm']:.3f} s ({verdict} the 0.5 s target); making the packets "
          f"(exact token counts and terms, once per packet) {ten['make']:.2f} s")
    print(f"same with diversity 0.5 (near-duplicate penalty): {diverse:.3f} s")
    big, small = rows[-1], rows[0]
    olds = ", ".join(f"code {label} x{big['before'][label] / small['before'][label]:.0f}"
                     for label in REFERENCES)
    print(f"growth 1,000 -> 100,000 packets (100x): warm build x{big['warm'] / small['warm']:.0f} "
          f"({olds}), making packets x{big['make'] / small['make']:.0f}")
    print("\nwarm build, growth with 10x the packets (10.0 is linear), and the time per packet at "
          "the largest size over that at 10,000 (1.00 is linear):")
    steps = list(zip(rows, rows[1:]))
    print(f"{'code':>25} " + " ".join(f"{a['n'] // 1000:>4}k->{b['n'] // 1000}k" for a, b in steps)
          + f" {'per packet':>11} {'old/now at ' + format(big['n'], ','):>18}")
    versions = [(f"{label} ({commit[:7]})", lambda r, label=label: r["before"][label])
                for label, commit in REFERENCES.items()] + [("now", lambda r: r["warm"])]
    ten = next(r for r in rows if r["n"] == 10_000)
    for name, warm in versions:
        print(f"{name:>25} " + " ".join(f"{warm(b) / warm(a):>10.1f}" for a, b in steps)
              + f" {warm(big) / big['n'] / (warm(ten) / ten['n']):>10.2f}x"
              + f" {warm(big) / big['warm']:>17.2f}x")


if __name__ == "__main__":
    main()
