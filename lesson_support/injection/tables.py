"""The configurations compared (layers added one by one, each alone, the textbook's experiment
2-5), run over the table, and their verdicts as text tables.
"""
from __future__ import annotations

from lesson_support.injection.data import load_rows
from lesson_support.injection.layers import LAYERS
from lesson_support.injection.session import make_agent


def cumulative_configs() -> list[tuple[str, tuple[str, ...]]]:
    """(label, layers): none, then each layer added in order."""
    configs = [("no defence", ())]
    for n in range(1, len(LAYERS) + 1):
        configs.append(("+ " + LAYERS[n - 1], LAYERS[:n]))
    return configs


def single_configs() -> list[tuple[str, tuple[str, ...]]]:
    return [(layer + " alone", (layer,)) for layer in LAYERS]


def textbook_configs() -> list[tuple[str, tuple[str, ...]]]:
    """Experiment 2-5's defence comparison: none, a warning, tags, both, and both plus a
    confirmation for high-risk actions."""
    return [("no defence", ()), ("warning in the prompt", ("warning_only",)),
            ("tags only", ("tags_only",)), ("tags + policy", ("fence",)),
            ("tags + policy + confirm", ("fence", "confirm"))]


def run_configs(configs, rows=None, *, client=None, model: str | None = None,
                agent_factory=None, workers: int = 6) -> dict[str, list]:
    """{label: verdicts} for every (label, layers) configuration over `rows` (default: all).

    The agents talk to `client` with `model` (default: `course.llm.client()` and
    `model_name()`); `agent_factory`, if given, builds them instead. Configurations run in
    parallel threads; each row's run is independent, so the verdicts are the same as run one
    by one."""
    from concurrent.futures import ThreadPoolExecutor

    from solutions.injection import run_attack_table

    rows = load_rows() if rows is None else rows
    factory = agent_factory or (lambda: make_agent(client, model))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {label: pool.submit(run_attack_table, factory(), rows, layers)
                   for label, layers in configs}
        return {label: future.result() for label, future in futures.items()}


def blocked_counts(verdicts) -> dict:
    attacks = [v for v in verdicts if v.kind == "attack"]
    tasks = [v for v in verdicts if v.kind == "task"]
    return {"blocked": sum(v.outcome == "blocked" for v in attacks), "attacks": len(attacks),
            "completed": sum(v.outcome == "completed" for v in tasks), "tasks": len(tasks)}


def verdict_grid(results: dict[str, list]) -> str:
    """A text table: one line per row, one column per configuration (. blocked/done, X not)."""
    labels = list(results)
    names = [v.name for v in next(iter(results.values()))]
    width = max(len(n) for n in names) + 1
    head = " " * width + " ".join(f"{i + 1:>2}" for i in range(len(labels)))
    lines = [head]
    for r, name in enumerate(names):
        marks = []
        for label in labels:
            v = results[label][r]
            marks.append(" ." if v.ok else (" X" if v.kind == "attack" else " F"))
        lines.append(f"{name:<{width}}" + " ".join(marks))
    lines.append("")
    lines += [f"{i + 1:>2} = {label}" for i, label in enumerate(labels)]
    return "\n".join(lines)


def counts_table(results: dict[str, list], tasks: bool = True) -> str:
    """Attacks blocked (and, if `tasks`, legitimate tasks completed) per configuration."""
    lines = [f"{'configuration':<24} {'attacks blocked':>16}" + (f" {'tasks completed':>16}" if tasks else "")]
    for label, verdicts in results.items():
        c = blocked_counts(verdicts)
        line = f"{label:<24} {c['blocked']:>9} of {c['attacks']}"
        if tasks:
            line = f"{line:<41} {c['completed']:>9} of {c['tasks']}"
        lines.append(line)
    return "\n".join(lines)
