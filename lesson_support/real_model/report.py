"""Chapter 16's measured data, read and printed: each file with the line that says where and when
it was measured, and its tables as text (course.tables.text_table)."""
from __future__ import annotations

import json
from pathlib import Path

from course.paths import DATA_DIR
from course.tables import text_table

DATA = DATA_DIR / "real_model"


def load(name: str, folder: Path = DATA) -> dict:
    """{"provenance", "results"} of data/real_model/<name>.json; a clear error if not measured."""
    path = Path(folder) / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is not measured yet: run python -m lesson_support.real_model {name}")
    return json.loads(path.read_text(encoding="utf-8"))


def provenance_line(stamp: dict) -> str:
    """One sentence: model, machine, load, date."""
    machine = stamp["machine"]
    start = machine.get("load_average_at_start")
    load = f"load average {start[0]:.1f} at the start, {machine['load_average_1_5_15'][0]:.1f} at the end" \
        if start else f"load average {machine['load_average_1_5_15'][0]:.1f}"
    return (f"Measured {stamp['measured_at'][:16].replace('T', ' ')} UTC with {stamp['model']['file']} "
            f"(sha256 {stamp['model']['sha256'][:12]}…, llama-cpp-python "
            f"{stamp['libraries']['llama-cpp-python']}) on {machine['cpu']}, {machine['cores']} cores, {load}.")


def _seconds(value) -> str:
    return "—" if value is None else f"{value:.2f}"


def cache_table(summary: list[dict]) -> str:
    """TTFT per scenario and length: median [min–max] over rounds, tokens evaluated, fraction of
    cold."""
    rows = [[f"{r['length']:,}", r["scenario"].replace("_", " "), str(r["n"]),
             f"{_seconds(r['ttft_median_s'])} [{_seconds(r['ttft_min_s'])}–{_seconds(r['ttft_max_s'])}]",
             "—" if r["evaluated_median"] is None else f"{r['evaluated_median']:,.0f}",
             "—" if r["of_cold"] is None else f"{r['of_cold']:.0%}"] for r in summary]
    return text_table(["length", "scenario", "n", "TTFT s median [min–max]", "evaluated", "of cold"],
                      rows, "><>>>>")


def comparison_table(rows: list[dict]) -> str:
    """The measured fraction of cold against the teaching model's simulated one, and why."""
    body = [[f"{r['length']:,}", r["scenario"].replace("_", " "),
             f"{r['real_of_cold']:.0%}", f"{r['real_cached']:,.0f}" if r["real_cached"] is not None else "—",
             f"{r['sim_of_cold']:.0%}", f"{r['sim_cached']:,}" if r["sim_cached"] is not None else "—",
             r["verdict"], r["why"]] for r in rows]
    return text_table(["length", "scenario", "real/cold", "real cached", "sim/cold", "sim cached",
                       "verdict", "why"], body, "><>>>><<")


def needle_table(cells: list[dict]) -> str:
    """Each cell: successes of n, the rate and its 95% Wilson interval, decoys answered."""
    body = [[f"{c['length']:,}", f"{c['depth']:.0%}", str(c["distractors"]), f"{c['successes']}/{c['n']}",
             f"{c['rate']:.0%}", f"{c['low']:.2f}–{c['high']:.2f}", str(c["took_decoy"])] for c in cells]
    return text_table(["length", "depth", "distractors", "found", "rate", "95% Wilson", "decoy"], body,
                      ">>>>>><")


def probe_table(rows: list[dict]) -> str:
    """One line per probe: the rule, how often the model did what it predicts, the control, the
    verdict."""
    body = [[r["probe"], f"{r['follows_rule']}/{r['trials']}", f"{r['follows_low']:.2f}–{r['follows_high']:.2f}",
             f"{r['control_ok']}/{r['trials']}", r["verdict"]] for r in rows]
    return text_table(["probe", "as the rule", "95% Wilson", "control", "verdict"], body, "<>><<")


def rate_table(rows: list[dict]) -> str:
    """prefix_cache.rate_comparison's rows: simulated against measured, verdict, why."""
    body = [[r["figure"], f"{r['simulated']:,.2f}", f"{r['measured']:,.2f}", r["verdict"], r["why"]]
            for r in rows]
    return text_table(["figure", "teaching model", "measured", "verdict", "why"], body, "<>><<")
