"""Chapter 12's lesson support and widget logic: the evaluator runs a configuration once, the
report's figures agree with success_interval, a failure comes with its transcript and trace,
and the few-shot placements keep or break the cache as the lesson says."""
import pytest

import course.llm
from course.givens.task_world import BASELINE, load_tasks
from course.llm.measuring import teaching_target
from lesson_support.evaluation import (Evaluator, cache_figures, first_failure, first_request, mixed_order,
                                      table)
from lesson_support.widgets.evaluation import Explorer, report
from solutions.evaluation import ablate, success_interval


@pytest.fixture(scope="module")
def server():
    with course.llm.serve() as handle:
        yield handle


def test_the_evaluator_runs_a_configuration_once(server):
    tasks = load_tasks()[:4]
    evaluator = Evaluator(server.client(), course.llm.MODEL_NAME, tasks, [0, 1])
    first = evaluator(BASELINE)
    assert evaluator({}) is first and evaluator.runs == 8
    assert [(r["task"], r["seed"]) for r in first] == [(t["id"], s) for t in tasks for s in (0, 1)]


def test_the_evaluator_reports_each_configuration_it_runs_once(server):
    """Lesson 12's progress bar steps once per configuration the ablation runs, not per call."""
    seen = []
    evaluator = Evaluator(server.client(), course.llm.MODEL_NAME, load_tasks()[:1], [0], on_run=seen.append)
    evaluator(BASELINE)
    evaluator({})
    evaluator({"tone": "casual", "rules": "vague"})
    assert seen == ["baseline", "tone casual, rules vague"]


def test_the_report_agrees_with_success_interval_and_shows_a_failure(server):
    tasks = [t for t in load_tasks() if t["kind"] in ("impostor", "move")][:5]
    explorer = Explorer(tasks, server.client(), course.llm.MODEL_NAME)
    got = report(explorer, {"structure": "unordered"}, 2, 0)
    stats = success_interval(explorer.evaluator(2, 0)({**BASELINE, "structure": "unordered"}))
    assert got["summary"].startswith(f"success {stats['successes']}/{stats['n']} ")
    failure = got["failure"]
    assert failure is not None and "assistant →" in failure["transcript"]
    assert "instructions" in failure["trace"] or "memory" in failure["trace"]


def test_the_unordered_prompt_skips_identity_and_the_baseline_does_not(server):
    tasks = [t for t in load_tasks() if t["kind"] == "impostor"]
    evaluator = Evaluator(server.client(), course.llm.MODEL_NAME, tasks, [0, 1])
    rows = ablate(BASELINE, {"structure": ["unordered"], "tone": ["casual"]}, evaluator)
    assert rows[0]["rate"] == 1.0 and rows[0]["violations"] == 0
    assert rows[1]["rate"] < 0.5 and rows[1]["violations"] > 0 and rows[1]["effect"]
    assert rows[2]["delta"] == 0 and not rows[2]["effect"], "tone is a factor the teaching model ignores"
    assert "no structure" in table(rows)
    assert first_failure(evaluator, BASELINE) is None


def test_few_shot_per_request_breaks_the_cache_and_fixed_placements_keep_it():
    tasks = mixed_order(load_tasks())[:10]
    figures = {}
    for placement in ("system prompt", "first turn", "chosen per request"):
        with course.llm.serve() as fresh:
            figures[placement] = cache_figures(teaching_target(fresh), tasks, placement)
    uncached = {name: f["prompt"] - f["cached"] for name, f in figures.items()}
    assert figures["system prompt"]["cached"] > 0.8 * figures["system prompt"]["prompt"]
    assert figures["first turn"]["cached"] > 0.8 * figures["first turn"]["prompt"]
    assert uncached["chosen per request"] > 2 * uncached["system prompt"], uncached
    messages = first_request(tasks[0], "first turn")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]


def test_tokens_are_counted(server):
    evaluator = Evaluator(server.client(), course.llm.MODEL_NAME, load_tasks()[:1], [0])
    [row] = evaluator(BASELINE)
    assert row["prompt_tokens"] > 1000 and row["completion_tokens"] > 0 and row["turns"] >= 2


def test_the_gate_lands_a_change_inside_the_noise_and_blocks_a_regression():
    from lesson_support.evaluation import regression_gate

    def evaluate(config):
        bad = config.get("structure") == "unordered"
        return [{"task": f"t{i}", "seed": s, "success": not (bad and i < 6) and (i, s) != (9, 0)}
                for i in range(10) for s in range(3)]
    assert regression_gate(evaluate, BASELINE, {**BASELINE, "tone": "casual"})["lands"]
    blocked = regression_gate(evaluate, BASELINE, {**BASELINE, "structure": "unordered"})
    assert not blocked["lands"] and blocked["losses"] == 18 and blocked["wins"] == 0
    assert blocked["broken"] == [f"t{i}" for i in range(6)]


# ---------------------------------------------------------------- the widget after Run All
def trials_slider(box):
    import ipywidgets as w

    [slider] = [c for row in box.children[:2] for c in row.children if isinstance(c, w.IntSlider)]
    return slider


def test_the_widget_answers_a_control_moved_after_the_lessons_server_stopped(capsys):
    """Lesson 12 stops its private teaching model in its last cell; the widget, made as the
    lesson makes it, runs on the course's own teaching model and still answers after that."""
    from lesson_support.widgets.evaluation import evaluation_explorer

    tasks = [t for t in load_tasks() if t["kind"] == "impostor"][:2]
    with course.llm.serve():  # the lesson's private model, stopped at the end of the lesson
        box = evaluation_explorer(tasks)
    assert "2 tasks × 3 seeds from 0" in capsys.readouterr().out
    trials_slider(box).value = 2  # Run All is over: the student moves a control
    assert "2 tasks × 2 seeds from 0" in capsys.readouterr().out


def test_a_recomputation_that_fails_says_so_in_the_output(capsys):
    """A widget whose server has stopped prints why it cannot answer, where the student looks,
    and stays alive, instead of the control's callback failing where nobody sees it."""
    from lesson_support.widgets.evaluation import evaluation_explorer

    tasks = [t for t in load_tasks() if t["kind"] == "impostor"][:2]
    with course.llm.serve() as private:
        client = private.client()  # stopped before a request, so no open connection outlives it
    box = evaluation_explorer(tasks, client, course.llm.MODEL_NAME)
    assert "could not run these trials: APIConnectionError" in capsys.readouterr().err
    trials_slider(box).value = 2
    shown = capsys.readouterr()
    assert "could not run these trials: APIConnectionError" in shown.err, shown
    assert "seeds from" not in shown.out
