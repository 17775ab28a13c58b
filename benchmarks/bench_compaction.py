"""How check_pairing and compact scale: 10k, 100k and 1M messages.

    python benchmarks/bench_compaction.py

Prints the time of each (best of a few runs) and the growth ratio from one size to the next.
Both make one pass over the messages, so a 10x longer transcript should take about 10x as
long (ratio ~10). Target: check_pairing on 1M messages in under 2 s. Figures depend on the
machine; the ratios are what to compare.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a clone without installing

from timing import best_time  # noqa: E402
from solutions.compaction import check_pairing, compact  # noqa: E402

SIZES = (10_000, 100_000, 1_000_000)
KEEP_TURNS = 20


def synthetic_transcript(n_messages: int) -> list[dict]:
    """A valid transcript of about n_messages: 1, 2 or 3 parallel calls per turn, some of
    them failing, and a text-only assistant message every fifth turn."""
    messages = [{"role": "system", "content": "You are a build agent."},
                {"role": "user", "content": "Build the project."}]
    turn = calls = 0
    while len(messages) < n_messages:
        ids = [f"call_{calls + j}" for j in range(turn % 3 + 1)]
        calls += len(ids)
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function",
             "function": {"name": "run_command", "arguments": json.dumps({"command": f"make {i}"})}}
            for i in ids]})
        for i in reversed(ids):
            content = json.dumps({"error": f"{i} failed"}) if turn % 7 == 0 else "ok"
            messages.append({"role": "tool", "tool_call_id": i, "content": content})
        if turn % 5 == 4:
            messages.append({"role": "assistant", "content": "Progress noted."})
        turn += 1
    return messages


def main() -> None:
    rows = []
    for size in SIZES:
        messages = synthetic_transcript(size)
        repeats = 5 if size < 1_000_000 else 3
        assert check_pairing(messages).ok  # the benchmark times the successful full scan
        check = best_time(lambda m=messages: check_pairing(m), repeats)
        small = compact(messages, keep_turns=KEEP_TURNS)
        assert check_pairing(small).ok and len(small) < len(messages)
        squeeze = best_time(lambda m=messages: compact(m, keep_turns=KEEP_TURNS), repeats)
        rows.append((len(messages), check, squeeze))
        del messages, small

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average while measuring: {load} on {os.cpu_count()} CPUs "
          "(other work on the machine inflates and scatters the figures)\n")
    print(f"{'messages':>10} {'check_pairing':>14} {'ratio':>6} {'compact':>10} {'ratio':>6}")
    previous = None
    for n, check, squeeze in rows:
        r1 = f"{check / previous[1]:6.1f}" if previous else f"{'':6}"
        r2 = f"{squeeze / previous[2]:6.1f}" if previous else f"{'':6}"
        print(f"{n:>10,} {check:>12.3f} s {r1} {squeeze:>8.3f} s {r2}")
        previous = (n, check, squeeze)
    n, check, _ = rows[-1]
    verdict = "meets" if check < 2.0 else "MISSES"
    print(f"\ncheck_pairing on {n:,} messages: {check:.3f} s ({verdict} the 2 s target); "
          f"{n / check / 1e6:.2f} M messages/s")
    print(f"compact keeps the last {KEEP_TURNS} turns and summarises the rest with the "
          "rule-based summary (its time includes its own check_pairing pass)")


if __name__ == "__main__":
    main()
