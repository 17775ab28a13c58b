"""The terminal sandbox in figures: attacks blocked per layer, legitimate commands still
working, and what the hardening costs per command.

    python benchmarks/bench_sandbox.py [--repeat N]

1. The attack table against the naive tool, then with layers added one by one (cumulative),
   then with each layer alone; every attack judged by canaries in a fresh scene. Which awk and
   /bin/sh the machine has is printed, and the attacks that need gawk are also run against
   each awk installed (mawk rejects their syntax, gawk runs them).
2. The legitimate-command table for the same configurations.
3. The naive attack table one attack after another (the old path) vs side by side in the
   red-team workers (run_attacks), with the cells compared.
4. Per-command time of the legitimate commands: naive vs hardened without bubblewrap
   (parse + arguments + hygiene; target: under 2x) and with it, as medians over interleaved
   runs, plus the bare start-up cost of bubblewrap (`bwrap ... true` vs `true`).
5. The cost of the hard-link census (layer 2 walks the workspace, and keeps the result until a
   folder in it changes) on the sample workspace and on one of 10,000 files.

Times depend on the machine and its load; compare the ratios.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a clone without installing

from lesson_support import sandbox_attacks as rt  # noqa: E402
from lesson_support.specimens.naive_terminal import TerminalTool  # noqa: E402
from solutions.sandbox import (HardenedTerminalTool, bubblewrap_argv,  # noqa: E402
                               bubblewrap_problem, check_arguments, outside_links, parse_command,
                               refuse_outside_links)
from solutions.sandbox import links  # noqa: E402

NO_BOX = ("parse", "arguments", "hygiene")


def attack_tables(configs: dict[str, tuple]) -> dict[str, dict]:
    return {title: rt.run_attacks(rt.tool_for(layers)) for title, layers in configs.items()}


def legit_counts(configs: dict[str, tuple]) -> dict[str, tuple[int, int]]:
    counts = {}
    for title, layers in configs.items():
        outcomes = rt.run_legits(rt.tool_for(layers))
        counts[title] = (sum(o.works for o in outcomes.values()), len(outcomes))
    return counts


def time_call(function, *args) -> float:
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def per_command_times(repeat: int, with_bwrap: bool) -> dict[str, list[float]]:
    """Seconds per legitimate command for each tool, interleaved so load hits all alike."""
    times: dict[str, list[float]] = {"naive": [], "hardened": [], "hardened+bwrap": []}
    with rt.open_scene() as scene:
        tools = {"naive": TerminalTool(scene.workspace, timeout=10, environ=scene.env),
                 "hardened": HardenedTerminalTool(scene.workspace, NO_BOX, timeout=10)}
        if with_bwrap:
            tools["hardened+bwrap"] = HardenedTerminalTool(scene.workspace, timeout=10)
        for name, tool in tools.items():  # warm up (imports, page cache, the bwrap probe)
            tool.run("ls")
        for _ in range(repeat):
            for legit in rt.LEGIT_COMMANDS:
                for name, tool in tools.items():
                    times[name].append(time_call(tool.run, legit.command))
    return {name: values for name, values in times.items() if values}


def check_times(repeat: int) -> list[float]:
    """Seconds spent in layers 1 and 2 alone (parse + check) per legitimate command."""
    values = []
    for _ in range(repeat):
        for legit in rt.LEGIT_COMMANDS:
            start = time.perf_counter()
            check_arguments(parse_command(legit.command), rt.SAMPLE_WORKSPACE)
            values.append(time.perf_counter() - start)
    return values


def bwrap_startup(repeat: int) -> tuple[float, float]:
    """Median seconds of `true` started directly and inside bubblewrap."""
    with rt.open_scene() as scene:
        plain, boxed = [], []
        sandbox = bubblewrap_argv(["/usr/bin/true"], scene.workspace)
        for _ in range(repeat):
            plain.append(time_call(subprocess.run, ["/usr/bin/true"]))
            boxed.append(time_call(subprocess.run, sandbox))
    return statistics.median(plain), statistics.median(boxed)


def gawk_rows_per_awk() -> dict[str, dict[str, str]]:
    """The attacks that need gawk, against the naive tool with each awk installed."""
    rows = [a for a in rt.ATTACKS if a.needs == "gawk"]
    found = {}
    for awk in ("/usr/bin/mawk", "/usr/bin/gawk", "/usr/bin/original-awk", "/usr/bin/busybox"):
        if os.path.exists(awk) and not awk.endswith("busybox"):
            outcomes = rt.run_attacks(rt.naive_tool(awk=awk), rows)
            found[os.path.basename(awk)] = {name: rt.cell(o) for name, o in outcomes.items()}
    return found


def census_times(files: int, repeat: int) -> tuple[float, float]:
    """Median seconds of the hard-link census over a workspace of `files` files in 100 folders:
    a full walk, and the check that the kept result still holds (no folder changed)."""
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(files):
            folder = Path(tmp) / f"dir{i % 100:03d}"
            folder.mkdir(exist_ok=True)
            (folder / f"file{i}.txt").write_text("x")
        walk = statistics.median(time_call(outside_links, tmp) for _ in range(repeat))
        time.sleep(links.RECENT_NS / 1e9 + 0.1)  # folders changed moments ago are not trusted
        refuse_outside_links(tmp)
        kept = statistics.median(time_call(refuse_outside_links, tmp) for _ in range(repeat * 4))
        return walk, kept


def table_times() -> tuple[float, float, bool]:
    """Seconds for the naive table one attack after another (the old path, kept here as the
    reference) and side by side in the workers (run_attacks), and whether the cells agree."""
    make = rt.tool_for(())
    rt.run_attacks(make, rt.ATTACKS[:2])  # start the workers, as a lesson's first table does
    start = time.perf_counter()
    old = {a.name: rt.cell(rt.run_attack(make, a)) for a in rt.ATTACKS}
    middle = time.perf_counter()
    new = {name: rt.cell(o) for name, o in rt.run_attacks(make).items()}
    return middle - start, time.perf_counter() - middle, old == new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="passes over the legit commands")
    repeat = parser.parse_args().repeat
    problem = bubblewrap_problem()
    if problem:
        print(f"NOTE: {problem}\nThe 'confine' layer is left out below.\n")
    keep = lambda layers: not (problem and "confine" in layers)  # noqa: E731
    cumulative = {t: layers for t, layers in rt.CUMULATIVE.items() if keep(layers)}
    alone = {f"{t} alone": layers for t, layers in rt.ALONE.items() if keep(layers)}

    print(f"Attack table ({len(rt.ATTACKS)} attacks; here /bin/sh is {rt.system_shell()} and awk "
          f"is {rt.system_awk()}; cells name the canaries tripped)\n")
    tables = attack_tables({**cumulative, **alone})
    layers_of = {**cumulative, **alone}
    print(rt.format_table({t: tables[t] for t in cumulative}, layers=layers_of))
    print("\nAttacks blocked (on every machine / here):")
    for title in tables:
        everywhere = rt.count_blocked(tables[title], layers_of[title])
        here = sum(o.blocked for o in tables[title].values())
        print(f"  {title:22s} {everywhere:3d} / {here:3d} of {len(rt.ATTACKS)}")
    wrong = [(title, name) for title in tables for name, o in tables[title].items()
             if o.blocked != rt.expected_blocked(rt.ATTACKS_BY_NAME[name], layers_of[title])]
    print(f"  cells that differ from the table's declaration: {wrong or 'none'}")
    print("\nThe attacks that need gawk, with each awk installed (naive tool):")
    for awk, cells in gawk_rows_per_awk().items():
        print(f"  {awk:6s} " + ", ".join(f"{name}: {cell}" for name, cell in cells.items()))

    print("\nLegitimate commands that still work (reply == plain shell output):")
    for title, (works, total) in legit_counts({**cumulative, **alone}).items():
        print(f"  {title:22s} {works:3d}/{total}")

    old, new, same = table_times()
    print(f"\nThe naive attack table: {old:.1f} s one attack after another, {new:.1f} s in "
          f"{rt.WORKERS} workers ({old / new:.1f}x faster; same cells: {same})")

    times = per_command_times(repeat, with_bwrap=not problem)
    medians = {name: statistics.median(values) for name, values in times.items()}
    runs = len(times["naive"])
    print(f"\nPer-command time, median of {runs} runs ({len(rt.LEGIT_COMMANDS)} legit commands "
          f"x {repeat} passes):")
    for name, value in medians.items():
        print(f"  {name:16s} {value * 1000:7.2f} ms")
    print(f"  hardened / naive, without bubblewrap: {medians['hardened'] / medians['naive']:.2f}x"
          "  (target: under 2x)")
    print(f"  of which parse + argument checks:     "
          f"{statistics.median(check_times(repeat)) * 1e6:.0f} us per command")
    if "hardened+bwrap" in medians:
        print(f"  hardened+bwrap / naive:               "
              f"{medians['hardened+bwrap'] / medians['naive']:.2f}x")
        plain, boxed = bwrap_startup(max(20, repeat * 4))
        print(f"\nBubblewrap start-up: /usr/bin/true {plain * 1000:.2f} ms directly, "
              f"{boxed * 1000:.2f} ms in bwrap: +{(boxed - plain) * 1000:.2f} ms per command")
    sample = statistics.median(time_call(outside_links, rt.SAMPLE_WORKSPACE) for _ in range(50))
    files = sum(len(f) for _, _, f in os.walk(rt.SAMPLE_WORKSPACE))
    walk, kept = census_times(10_000, 5)
    print(f"\nHard-link census: a full walk takes {sample * 1e6:.0f} us on the sample workspace "
          f"({files} files) and {walk * 1000:.1f} ms on 10,000 files; while no folder changes, "
          f"a command pays {kept * 1000:.2f} ms to confirm it")


if __name__ == "__main__":
    main()
