"""Chapter 16's cache explorer: what it reads from cache.json for a length and a request, and what
it says and draws (in Chinese: tests/lesson_support/test_widgets_i18n.py)."""
from __future__ import annotations

import pytest

from lesson_support.real_model import report
from lesson_support.real_model.prefix_cache import SCENARIOS
from lesson_support.widgets.real_model import bars_html, cache_explorer, scenario_line, scenario_view


def summary_row(length, scenario, median, evaluated, cached, of_cold):
    return {"length": length, "scenario": scenario, "n": 3, "prompt_tokens": evaluated + cached,
            "ttft_median_s": median, "ttft_min_s": median / 2, "ttft_max_s": median * 2,
            "ttft_q1_s": median, "ttft_q3_s": median, "evaluated_median": evaluated,
            "cached_median": cached, "of_cold": of_cold}


RESULTS = {
    "summary": [summary_row(300, "cold", 6.0, 300, 0, 1.0), summary_row(300, "end_change", 0.6, 30, 270, 0.1),
                summary_row(300, "top_change", 5.4, 280, 20, 0.9)],
    "comparison": [{"length": 300, "scenario": "end_change", "real_ttft_s": 0.6, "real_of_cold": 0.1,
                    "real_cached": 270, "sim_ttft_s": 0.27, "sim_of_cold": 1.0, "sim_cached": 0,
                    "verdict": "disagree", "why": "the simulated provider caches nothing under 1,024 tokens"}],
}


def test_a_view_joins_the_measured_row_and_the_simulated_one():
    view = scenario_view(RESULTS, 300, "end_change")
    assert (view["evaluated"], view["cached"], view["of_cold"]) == (30, 270, 0.1)
    assert (view["sim_of_cold"], view["sim_cached"], view["verdict"]) == (1.0, 0, "disagree")
    assert view["ttft_min_s"] == 0.3 and view["ttft_max_s"] == 1.2


def test_a_request_the_simulation_did_not_see_has_no_comparison():
    view = scenario_view(RESULTS, 300, "top_change")
    assert view["sim_of_cold"] is None and view["verdict"] is None
    line = scenario_line(view)
    assert line.startswith("top changed at 300 tokens: SmolLM2 evaluated 280 of 300 prompt tokens (20 from")
    assert "teaching model" not in line


def test_the_line_says_what_was_measured_and_whether_the_simulation_agrees():
    line = scenario_line(scenario_view(RESULTS, 300, "end_change"))
    assert line == ("end changed at 300 tokens: SmolLM2 evaluated 30 of 300 prompt tokens (270 from its "
                    "cache); time to first token 0.60 s, median of 3 [0.30–1.20], 10% of cold. The teaching "
                    "model simulates 100% of cold with 0 cached tokens: they disagree (the simulated provider "
                    "caches nothing under 1,024 tokens).")


def test_unknown_lengths_and_requests_are_refused_with_what_exists():
    with pytest.raises(ValueError, match=r"measured lengths are \[300\]"):
        scenario_view(RESULTS, 999, "cold")
    with pytest.raises(ValueError, match="choose one of cold, again"):
        scenario_view(RESULTS, 300, "warm")


def test_the_bars_are_the_shares_of_cold_and_a_longer_than_cold_bar_stops_at_the_edge():
    view = {**scenario_view(RESULTS, 300, "end_change"), "of_cold": 1.37}
    page = bars_html(view, width=200)
    assert "width:200px'></span></span><span style='margin-left:6px'>137%" in page  # clipped, labelled
    assert "width:200px'></span></span><span style='margin-left:6px'>100%" in page  # the simulated bar
    no_sim = bars_html(scenario_view(RESULTS, 300, "top_change"), width=200)
    assert "width:0px'></span></span><span style='margin-left:6px'>—" in no_sim


def test_every_stored_cell_has_a_view_and_a_line():
    results = report.load("cache")["results"]
    lengths = sorted({r["length"] for r in results["summary"]})
    for length in lengths:
        for scenario in SCENARIOS:
            view = scenario_view(results, length, scenario)
            assert view["n"] >= 1 and f"{length:,} tokens" in scenario_line(view)
            assert view["verdict"] in ("agree", "disagree")


def test_the_explorer_wires_its_controls_to_the_read_out():
    widget = cache_explorer(RESULTS)
    length, scenario, out = widget.children
    assert length.options == (("300", 300),) and scenario.value == "top_change"
    assert "top changed at 300 tokens" in out.value
    scenario.value = "end_change"  # moving a control redraws the read-out
    assert "end changed at 300 tokens" in out.value and "they disagree" in out.value


def test_every_reason_the_comparison_gives_is_translatable():
    from lesson_support.real_model.prefix_cache import _why
    from lesson_support.widgets.real_model import REASONS

    given = {_why({}, {"cached_tokens": cached}, real, sim)
             for real in (True, False) for sim in (True, False) for cached in (0, 128)}
    assert given == set(REASONS)
