"""The configurations compared (layers added one by one, each alone, the textbook's experiment
2-5), run over the table, and their verdicts as text tables.
"""
from __future__ import annotations

from lesson_support.injection.data import load_rows
from lesson_support.injection.layers import LAYERS
from lesson_support.injection.session import make_agent
from course.tables import text_table


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
    rows = [[name] + ["." if v.ok else ("X" if v.kind == "attack" else "F")
                      for v in (results[label][r] for label in labels)]
            for r, name in enumerate(names)]
    grid = text_table([""] + [str(i + 1) for i in range(len(labels))], rows, "<" + ">" * len(labels),
                      widths=[max(len(n) for n in names) + 1] + [2] * len(labels),
                      sep=[""] + [" "] * (len(labels) - 1))
    return grid + "\n\n" + "\n".join(f"{i + 1:>2} = {label}" for i, label in enumerate(labels))


def counts_table(results: dict[str, list], tasks: bool = True) -> str:
    """Attacks blocked (and, if `tasks`, legitimate tasks completed) per configuration."""
    rows = []
    for label, verdicts in results.items():
        c = blocked_counts(verdicts)
        rows.append([label, f"{c['blocked']:>9} of {c['attacks']:<3}", f"{c['completed']:>9} of {c['tasks']:<3}"])
    headers = ["configuration", "attacks blocked", "tasks completed"]
    columns = 3 if tasks else 2
    return text_table(headers[:columns], [row[:columns] for row in rows], "<>>"[:columns],
                      widths=[24, 16, 16][:columns], strip=True)
