"""The ablation explorer (Chapter 12): pick the configuration's pieces, the number of trials and
the first seed; see the success rate with its interval and pass^k, and a failed trial's
transcript with the trace of the reply that went wrong.

The logic is `report` (tested in tests/lesson_support/test_evaluation_widget.py); the widget
only wires controls to it. Each (trials, seed) choice gets its own Evaluator, which runs a
configuration once and keeps it.

The widget runs on the course's process-wide teaching model (`course.llm.default_server()`),
not on a server the lesson passes in: a lesson stops its private server in its last cell, and
a widget must still answer when a control moves after Run All. What goes wrong while it
recomputes is printed in its output, never swallowed by the control's callback.
"""
from __future__ import annotations

import sys

from course.givens.task_world import BASELINE, FACTORS
from course.i18n import _
from lesson_support.evaluation import Evaluator, first_failure
from solutions.evaluation import success_interval


class Explorer:
    """Evaluators per (trials, first seed), sharing one client and task list."""

    def __init__(self, tasks: list[dict], client=None, model: str | None = None):
        import course.llm

        self.client = client if client is not None else course.llm.default_server().client()
        self.model, self.tasks = model or course.llm.MODEL_NAME, tasks
        self.evaluators: dict[tuple[int, int], Evaluator] = {}

    def evaluator(self, trials: int, seed: int) -> Evaluator:
        key = (int(trials), int(seed))
        if key not in self.evaluators:
            self.evaluators[key] = Evaluator(self.client, self.model, self.tasks,
                                             range(key[1], key[1] + key[0]))
        return self.evaluators[key]


def report(explorer: Explorer, config: dict, trials: int, seed: int) -> dict:
    """{"summary": one line (rate, Wilson interval, pass^k, runs), "failure": a failed trial
    (first_failure's dict) or None}."""
    evaluator = explorer.evaluator(trials, seed)
    results = evaluator({**BASELINE, **config})
    stats = success_interval(results)
    pass_k = ", ".join(f"pass^{k} {v:.0%}" for k, v in stats["pass_k"].items())
    summary = _("success {successes}/{n} = {rate} (95% Wilson {low}–{high}); {pass_k}; "
                "{tasks} tasks × {trials} seeds from {seed}").format(
        successes=stats["successes"], n=stats["n"], rate=f"{stats['rate']:.0%}",
        low=f"{stats['low']:.0%}", high=f"{stats['high']:.0%}", pass_k=pass_k,
        tasks=len(explorer.tasks), trials=trials, seed=seed)
    return {"summary": summary, "failure": first_failure(evaluator, {**BASELINE, **config})}


def evaluation_explorer(tasks: list[dict], client=None, model: str | None = None):
    """The widget, on the course's teaching model unless `client` (and `model`) say otherwise."""
    import ipywidgets as w

    explorer = Explorer(tasks, client, model)
    label = {"style": {"description_width": "initial"}}  # a label never cut off, in any language
    pickers = {name: w.Dropdown(options=variants, value=BASELINE[name], description=name, **label)
               for name, variants in FACTORS.items()}
    trials = w.IntSlider(value=3, min=1, max=6, description=_("trials"), **label)
    seed = w.IntText(value=0, description=_("first seed"), layout=w.Layout(width="12em"), **label)
    out = w.Output()

    def show(*changes):
        config = {name: picker.value for name, picker in pickers.items()}
        with out:
            out.clear_output(wait=True)
            try:
                got = report(explorer, config, trials.value, seed.value)
            except Exception as error:  # say so where the student looks; keep the widget alive
                print(_("could not run these trials: {error}").format(
                    error=f"{type(error).__name__}: {error}"), file=sys.stderr)
                return
            print(got["summary"])
            failure = got["failure"]
            if failure is None:
                print(_("every trial succeeded, with no tool-call error or violation"))
                return
            outcome = _("succeeded, with a bad call") if failure["success"] else _("failed")
            print("\n" + _("{task} (seed {seed}): {outcome}").format(
                task=failure["task"], seed=failure["seed"], outcome=outcome))
            print(failure["transcript"])
            print("\n" + _("the trace of reply {reply}:").format(reply=failure["reply"]))
            print(failure["trace"])

    for control in [*pickers.values(), trials, seed]:
        control.observe(show, "value")
    show()
    row = {"layout": w.Layout(flex_flow="row wrap")}
    return w.VBox([w.HBox(list(pickers.values())[:3], **row),
                   w.HBox([*list(pickers.values())[3:], trials, seed], **row), out])
