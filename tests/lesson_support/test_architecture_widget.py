"""Chapter 15's widget logic and lesson support: compose's arithmetic and refusals, the summary
table, the action-space measurements (prefix tokens, confusion, data), the sub-agent modes
(fresh children cheaper than forks, forks knowing the parent's facts), the sliding window's
pairing, the cache-key session."""
import pytest

import course.llm
from course.givens.production_compaction import load_run
from lesson_support.architecture import (ASKS, DESIGNS, choice_errors, prefix_tokens, session,
                                         session_choices, hit_rate)
from lesson_support.architecture_runs import (MODES, WINDOW_MESSAGES, mode_table, run_mode,
                                              sliding_window)
from lesson_support.widgets.architecture import compose, summary_html
from solutions.architecture import PROMPT_FRAGMENTS, move_after_boundary, render_prompt
from solutions.compaction import check_pairing

MODEL = course.llm.MODEL_NAME
DESIGN = {"a": {"prefix": 100, "errors": [1, 0, 3, 0, 0, 0, 0, 4], "trials": 80, "data": 50}}
MODE = {"m": {"tokens": 1_000, "cached": 900, "wall_s": 2.5}}
SCHEME = {"s": 0.5}


def test_compose_adds_the_measured_parts():
    row = compose(DESIGN, MODE, SCHEME, "a", "m", "s", ask_tokens=200)
    asks = 8 * 100 + 200
    assert row["tokens"] == asks + 50 + 1_000 and row["cached"] == round(asks * 0.5) + 900
    assert row["errors"] == 8 * 8 / 80 and row["wall_s"] == 2.5 and row["data"] == 50
    assert row["hit_rate"] == row["cached"] / row["tokens"]
    # the study guide's DeepSeek prices: 0.15 $ per million uncached, 0.003 cached
    assert row["cost"] == pytest.approx(((row["tokens"] - row["cached"]) * 0.15 + row["cached"] * 0.003) / 1e6)


def test_a_better_scheme_costs_less():
    cheap = compose(DESIGN, MODE, {"s": 0.9}, "a", "m", "s", 200)
    dear = compose(DESIGN, MODE, {"s": 0.1}, "a", "m", "s", 200)
    assert cheap["tokens"] == dear["tokens"] and cheap["cost"] < dear["cost"]


@pytest.mark.parametrize("choice", [("x", "m", "s"), ("a", "x", "s"), ("a", "m", "x")])
def test_compose_refuses_unknown_choices(choice):
    with pytest.raises(ValueError, match="unknown choice"):
        compose(DESIGN, MODE, SCHEME, *choice, 200)


def test_summary_html_escapes_and_shows_the_figures():
    row = compose(DESIGN, MODE, SCHEME, "a", "m", "s", 200)
    page = summary_html({**row, "design": "<b>"})
    assert "&lt;b&gt;" in page and f"{row['tokens']:,}" in page


def test_the_specialised_tools_cost_most_prefix_and_most_confusion():
    with course.llm.serve() as server:
        errors = {name: sum(choice_errors(server.client(), MODEL, tools, k, range(6)))
                  for k, (name, tools) in enumerate(DESIGNS.items())}
    prefixes = [prefix_tokens(tools) for tools in DESIGNS.values()]
    assert prefixes[0] > prefixes[2] > prefixes[1]
    assert errors["many specialised"] > errors["ten atomic"]
    assert all(len(right) == len(DESIGNS) for _, right in ASKS)


def test_sliding_window_keeps_pairs_and_the_head():
    history = load_run().history(60)
    window = sliding_window(history, WINDOW_MESSAGES)
    assert window[:2] == history[:2] and check_pairing(window)
    assert len(window) <= 2 + WINDOW_MESSAGES and window[-1] == history[-1]
    assert sliding_window(history[:10], WINDOW_MESSAGES) == history[:10]


def test_fresh_children_cost_less_than_forks_and_know_less():
    run = load_run()
    results = {}
    for mode in MODES:
        with course.llm.serve() as server:
            results[mode] = run_mode(run, mode, server.client(), MODEL, tasks=[
                "Search the code for commit_offset and list its callers."])
    inline, fresh, own, same = (results[m] for m in MODES)
    assert fresh.total_tokens < own.total_tokens and fresh.parent_tokens < inline.parent_tokens
    assert fresh.knows < own.knows == same.knows == inline.knows
    assert own.children[0]["cached_tokens"] < same.children[0]["cached_tokens"]
    assert fresh.wall_s < inline.wall_s
    assert "fresh" in mode_table(results, 8)
    with pytest.raises(ValueError):
        run_mode(run, "telepathy", None, MODEL)


def test_moving_the_switches_raises_the_session_hit_rate():
    run, choices = load_run(), session_choices(10)
    rates = []
    for fragments in (PROMPT_FRAGMENTS, move_after_boundary(PROMPT_FRAGMENTS)):
        with course.llm.serve() as server:
            rates.append(hit_rate(session(server.client(), MODEL, fragments, choices, run.tools,
                                          render_prompt, "Which tests are flaky?")))
    assert rates[1] > rates[0]
    assert hit_rate([]) == 0.0


def test_measuring_the_designs_reports_each_design_as_it_finishes(tmp_path):
    """Lesson 15's progress bar steps once per design, in the order the table lists them."""
    from course.givens.architecture import big_log
    from lesson_support.architecture import measure_designs

    log = big_log(tmp_path, 0.25)
    done = []
    with course.llm.serve() as server:
        designs = measure_designs(server.client(), MODEL, tmp_path, log, seeds=range(1), on_design=done.append)
    assert done == list(DESIGNS) == list(designs)
