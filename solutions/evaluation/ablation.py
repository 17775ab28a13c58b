"""ablate: the baseline and one change at a time, each compared with the baseline on the same
tasks and seeds (paired)."""
from __future__ import annotations

from solutions.evaluation.stats import sign_test, success_interval


def _totals(results):
    return {key: sum(r.get(key, 0) for r in results)
            for key in ("tool_errors", "violations", "turns", "prompt_tokens", "completion_tokens")}


def ablate(baseline: dict, factors: dict, evaluate, level: float = 0.95) -> list[dict]:
    """Rows: the baseline first, then one per (factor, variant) other than the baseline's.

    `factors` is {factor: [variants]}; `evaluate(config)` returns run_trials' results for a
    configuration. Each row: {"factor", "variant", "config", "n", "rate", "low", "high",
    "delta" (rate - baseline's), "wins", "losses" (pairs of the same task and seed that only
    this configuration, or only the baseline, got right), "p" (exact sign test on those pairs),
    "effect" (p < 1 - level), and the totals of tool_errors, violations, turns, tokens}."""
    base_results = evaluate(dict(baseline))
    base = {(r["task"], r["seed"]): bool(r["success"]) for r in base_results}
    stats = success_interval(base_results, level)
    rows = [{"factor": "baseline", "variant": "", "config": dict(baseline), "n": stats["n"],
             "rate": stats["rate"], "low": stats["low"], "high": stats["high"], "delta": 0.0,
             "wins": 0, "losses": 0, "p": 1.0, "effect": False, **_totals(base_results)}]
    for factor, variants in factors.items():
        for variant in variants:
            if baseline.get(factor) == variant:
                continue
            config = {**baseline, factor: variant}
            results = evaluate(config)
            stats = success_interval(results, level)
            pairs = [(bool(r["success"]), base[(r["task"], r["seed"])]) for r in results
                     if (r["task"], r["seed"]) in base]
            wins = sum(mine and not theirs for mine, theirs in pairs)
            losses = sum(theirs and not mine for mine, theirs in pairs)
            p = sign_test(wins, losses)
            rows.append({"factor": factor, "variant": variant, "config": config, "n": stats["n"],
                         "rate": stats["rate"], "low": stats["low"], "high": stats["high"],
                         "delta": stats["rate"] - rows[0]["rate"], "wins": wins, "losses": losses,
                         "p": p, "effect": p < 1 - level, **_totals(results)})
    return rows
