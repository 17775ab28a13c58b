"""Chapter 12's lesson support: the desk as an agent for run_trials, an evaluator that remembers
each configuration's trials, the ablation's table and plot, the few-shot placements measured
for the cache, and a failed trial's transcript with the trace of the reply that went wrong."""
from __future__ import annotations

from course.givens.task_world import (BASELINE, EXAMPLES, SECTION_ORDER, SECTIONS, run_task, system_prompt,
                                      tools_for)
from course.tables import text_table
from solutions.evaluation import run_trials

TEMPERATURE = 0.5   # every trial samples (course/llm/sampling.py); the seed fixes its draws
LABELS = {"baseline": "baseline", "tone": "tone", "structure": "no structure",
          "descriptions": "no tool descriptions", "rules": "vague rules", "few_shot": "no few-shot"}


def config_key(config: dict) -> tuple:
    full = {**BASELINE, **config}
    return tuple(sorted(full.items()))


def row_label(row: dict) -> str:
    if row["factor"] == "baseline":
        return "baseline"
    return LABELS[row["factor"]] + (f" ({row['variant']})" if row["factor"] == "tone" else "")


def config_label(config: dict) -> str:
    """What a configuration changes from the baseline, in a few words ("baseline" if nothing)."""
    changed = [f"{name} {value}" for name, value in {**BASELINE, **config}.items() if BASELINE.get(name) != value]
    return ", ".join(changed) or "baseline"


class Evaluator:
    """`evaluator(config)`: run_trials' results for a configuration over the tasks and seeds,
    run once per configuration on `client` and kept, with each trial's outcome (for the
    transcript of a failure). `on_run(label)`, if given, is called after each configuration
    it runs (a progress bar's `step`: a lesson's ablation takes half a minute)."""

    def __init__(self, client, model: str, tasks: list[dict], seeds, temperature: float = TEMPERATURE,
                 on_run=None):
        self.client, self.model, self.tasks = client, model, tasks
        self.seeds, self.temperature = list(seeds), temperature
        self.on_run = on_run
        self.results: dict[tuple, list[dict]] = {}
        self.outcomes: dict[tuple, dict] = {}

    def agent(self, key):
        def run(task, config, seed, db):
            outcome = run_task(self.client, task, config, seed, db, model=self.model,
                               temperature=self.temperature)
            self.outcomes[(key, task["id"], seed)] = outcome
            return outcome
        return run

    def __call__(self, config: dict) -> list[dict]:
        key = config_key(config)
        if key not in self.results:
            self.results[key] = run_trials(self.agent(key), self.tasks, dict(config), self.seeds)
            if self.on_run is not None:
                self.on_run(config_label(config))
        return self.results[key]

    @property
    def runs(self) -> int:
        return sum(len(r) for r in self.results.values())


def table(rows: list[dict]) -> str:
    """The ablation's rows as a text table, one configuration a line."""
    body = []
    for row in rows:
        n = row["n"] or 1
        tokens = (row["prompt_tokens"] + row["completion_tokens"]) / n
        body.append([row_label(row), f"{row['rate']:.0%}", f"{row['low']:>5.0%} – {row['high']:<5.0%}",
                     f"{row['delta']:+.0%}", f"{row['p']:.3f}", row["tool_errors"], row["violations"],
                     f"{row['turns'] / n:.1f}", f"{tokens:,.0f}"])
    return text_table(["configuration", "success", "95% interval", "Δ vs base", "paired p", "tool errors",
                       "violations", "turns/task", "tokens/task"], body, "<><>>>>>>",
                      widths=[26, 8, 14, 10, 10, 12, 11, 11, 12], sep=["", "  "] + [""] * 6, rule="-")


def figure(rows: list[dict]):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.4))
    names = [row_label(r) for r in rows]
    rates = [r["rate"] for r in rows]
    below = [r["rate"] - r["low"] for r in rows]
    above = [r["high"] - r["rate"] for r in rows]
    colours = ["#4c72b0" if r["factor"] == "baseline" else ("#c44e52" if r["effect"] else "#8c8c8c")
               for r in rows]
    ax.bar(names, rates, yerr=[below, above], capsize=4, color=colours)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("task success (95% Wilson)")
    ax.set_title(f"one factor changed at a time; {rows[0]['n']} trials per bar; red: a paired effect")
    ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- few-shot placement and the cache
PLACEMENTS = ("system prompt", "first turn", "chosen per request")
KIND_EXAMPLE = {"move": "move", "cancel": "cancel", "cancel+refund": "cancel", "refund": "refund",
                "bag": "bag", "upgrade": "upgrade", "question": "question", "impostor": "cancel"}


def _similar_examples(request: str) -> list[str]:
    words = set(request.lower().split())
    return sorted(EXAMPLES.values(), key=lambda text: -len(words & set(text.lower().split())))[:3]


def first_request(task: dict, placement: str) -> list[dict]:
    """The first request's messages of `task` with the few-shot examples placed as `placement`
    says: at the end of the system prompt (the baseline), as a synthetic first turn fixed per
    task type, or chosen per request by similarity and put at the top of the system prompt,
    under a line that names the request they were chosen for."""
    request = task["turns"][0]
    if placement == "system prompt":
        return [{"role": "system", "content": system_prompt(BASELINE)}, {"role": "user", "content": request}]
    plain = system_prompt({**BASELINE, "few_shot": "none"})
    if placement == "first turn":
        example = EXAMPLES[KIND_EXAMPLE[task["kind"]]]
        customer, desk = example.split(" Desk: ")
        return [{"role": "system", "content": plain},
                {"role": "user", "content": customer.split("Customer: ", 1)[1]},
                {"role": "assistant", "content": desk},
                {"role": "user", "content": request}]
    # the choice is made for this request and says so: the prompt's top now differs per request
    chosen = f"Examples chosen for the request {request!r}:\n" + "\n".join(_similar_examples(request))
    return [{"role": "system", "content": chosen + "\n\n" + plain}, {"role": "user", "content": request}]


def mixed_order(tasks: list[dict]) -> list[dict]:
    """The tasks as a desk receives them: round-robin over their kinds, not grouped."""
    by_kind: dict[str, list[dict]] = {}
    for task in tasks:
        by_kind.setdefault(task["kind"], []).append(task)
    queues = list(by_kind.values())
    out = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


def cache_figures(target, tasks: list[dict], placement: str) -> dict:
    """Each task's first request sent to `target` in order: requests, prompt and cached tokens."""
    from course.usage import read_usage

    prompt = cached = 0
    reported = True
    for task in tasks:
        # no max_tokens: OpenAI's newer models refuse it (max_completion_tokens), and the
        # figures measured here are the prompt's
        usage = read_usage(target.create(messages=first_request(task, placement),
                                         tools=tools_for(BASELINE)).usage)
        prompt += usage.prompt or 0
        if usage.cached is None:
            reported = False
        cached += usage.cached or 0
    return {"placement": placement, "requests": len(tasks), "prompt": prompt,
            "cached": cached if reported else None}


# ---------------------------------------------------------------- a failure, shown
def render_transcript(messages: list[dict], width: int = 110) -> str:
    lines = []
    for m in messages:
        if m["role"] == "system":
            lines.append(f"system: ({len(m['content'])} characters)")
        elif m.get("tool_calls"):
            for call in m["tool_calls"]:
                lines.append(f"assistant → {call['function']['name']}({call['function']['arguments']})")
        else:
            text = " ".join(str(m.get("content") or "").split())
            lines.append(f"{m['role']}: {text[:width]}{'…' if len(text) > width else ''}")
    return "\n".join(lines)


def render_trace(trace) -> str:
    if not trace:
        return "(no trace: only the teaching model explains its replies)"
    return "\n".join(f"  {step.get('rule', '?')}: {' '.join(str(step.get('why', '')).split())[:160]}"
                     for step in trace)


def first_failure(evaluator: Evaluator, config: dict) -> dict | None:
    """The first failed trial of `config` (or the first with a bad call): its task, seed, the
    transcript and the trace of the reply that made the first bad call."""
    key = config_key(config)
    results = evaluator(config)
    for row in sorted(results, key=lambda r: (r["success"], r["violations"] == 0 and r["tool_errors"] == 0)):
        if row["success"] and not row["tool_errors"] and not row["violations"]:
            return None
        outcome = evaluator.outcomes[(key, row["task"], row["seed"])]
        bad = outcome["bad_calls"][0] if outcome["bad_calls"] else len(outcome["traces"]) - 1
        return {"task": row["task"], "seed": row["seed"], "success": row["success"],
                "transcript": render_transcript(outcome["transcript"]),
                "reply": bad + 1, "trace": render_trace(outcome["traces"][bad])}
    return None


def section_texts(config: dict | None = None) -> dict:
    """The system prompt's sections of a configuration, {name: text}, in assembly order."""
    config = {**BASELINE, **(config or {})}
    return {name: SECTIONS[name][config[name]] for name in SECTION_ORDER}


def regression_gate(evaluate, current: dict, proposed: dict, level: float = 0.95) -> dict:
    """Whether a prompt change may land: the proposed configuration against the current one on
    the same tasks and seeds. It is blocked when it loses significantly more paired trials than
    it wins (the sign test at `level`), or when it breaks a task the current prompt never
    fails; otherwise it lands (a difference inside the noise is not a regression)."""
    from solutions.evaluation import sign_test

    now = {(r["task"], r["seed"]): r["success"] for r in evaluate(current)}
    new = {(r["task"], r["seed"]): r["success"] for r in evaluate(proposed)}
    wins = sum(new[k] and not now[k] for k in now)
    losses = sum(now[k] and not new[k] for k in now)
    p = sign_test(wins, losses)
    always = {task for task, _ in now} - {task for (task, _), ok in now.items() if not ok}
    broken = sorted({task for (task, _), ok in new.items() if task in always and not ok})
    blocked = (losses > wins and p < 1 - level) or bool(broken)
    return {"lands": not blocked, "wins": wins, "losses": losses, "p": p, "broken": broken}
