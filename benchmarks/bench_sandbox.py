"""The terminal sandbox in figures: attacks blocked per layer, legitimate commands still
working, and what the hardening costs per command.

    python benchmarks/bench_sandbox.py [--repeat N]

1. The attack table against the naive tool, then with layers added one by one (cumulative),
   then with each layer alone; every attack judged by canaries in a fresh scene.
2. The legitimate-command table for the same configurations.
3. Per-command time of the legitimate commands: naive vs hardened without bubblewrap
   (parse + arguments + hygiene; target: under 2x) and with it, as medians over interleaved
   runs, plus the bare start-up cost of bubblewrap (`bwrap ... true` vs `true`).

Times depend on the machine and its load; compare the ratios.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a clone without installing

from solutions.sandbox import (HardenedTerminalTool, TerminalTool, bubblewrap_argv,  # noqa: E402
                               bubblewrap_problem, check_arguments, parse_command)
from lesson_support import redteam as rt  # noqa: E402

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

    print(f"Attack table ({len(rt.ATTACKS)} attacks, /bin/sh is {rt.system_shell()}; "
          "cells name the canaries tripped)\n")
    tables = attack_tables({**cumulative, **alone})
    print(rt.format_table({t: tables[t] for t in cumulative}))
    print("\nAttacks blocked:")
    for title in tables:
        blocked = sum(o.blocked for o in tables[title].values())
        print(f"  {title:22s} {blocked:3d}/{len(rt.ATTACKS)}")

    print("\nLegitimate commands that still work (reply == plain shell output):")
    for title, (works, total) in legit_counts({**cumulative, **alone}).items():
        print(f"  {title:22s} {works:3d}/{total}")

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


if __name__ == "__main__":
    main()
