"""The status-bar replay widget's logic (lesson_support/widgets/status_bar.py)."""
import pytest

from lesson_support.status_bar import load_run
from lesson_support.widgets.status_bar import (QUESTION, ask, cached_svg, shown_status, step_view,
                                               status_bar_replay, usage, view_html)
from solutions.status_bar import parse_status, render_status

RUN = load_run()
LAST = RUN.n_requests + 1


def test_an_injected_error_moves_only_the_xfinity_counter_and_never_below_zero():
    true = RUN.status(LAST, follow_up=True)
    wrong = shown_status(RUN, LAST, -2, at_follow_up=True)
    assert parse_status(render_status(wrong))["calls call Xfinity"] == "1/3 max"
    assert shown_status(RUN, LAST, -9, True)["calls"]["call.Xfinity"] == 0
    assert {k: v for k, v in wrong["calls"].items() if k != "call.Xfinity"} == \
        {k: v for k, v in true["calls"].items() if k != "call.Xfinity"}


def test_the_model_reads_the_bar_it_is_shown(client):
    right, trace = ask(RUN, LAST, "end", "replace", 0, client, "teaching-model")
    wrong, _ = ask(RUN, LAST, "end", "replace", -2, client, "teaching-model")
    assert "3/3" in right and "1/3" in wrong and "status" in trace.lower()
    windowless, _ = ask(RUN, 20, "none", "replace", 0, client, "teaching-model")
    assert "1 call" in windowless  # only one call to Xfinity is in the first 19 steps


def test_step_view_and_html(client):
    view = step_view(RUN, 10, "system", "replace", 0, client, "teaching-model")
    assert len(view["records"]) == 10 and view["cached"] == 0  # the system prompt breaks the cache
    assert view["bar"].startswith("<agent_status>")
    page = view_html(view, LAST)
    assert QUESTION in page and "<svg" in page and "&lt;agent_status&gt;" in page
    with pytest.raises(ValueError, match="step must be between"):
        step_view(RUN, 0, "end", "replace")


def test_usage_is_computed_once_per_strategy():
    assert usage(RUN, "system", "append") == usage(RUN, "system", "replace")


def test_svg_has_two_bars_per_request():
    svg = cached_svg([{"prompt_tokens": 100, "cached_tokens": 50}] * 3, 5)
    assert svg.count("<rect") == 6


def test_the_widget_builds():
    widget = status_bar_replay(RUN)
    assert "request" in repr(widget.children[0].children[0].description)
