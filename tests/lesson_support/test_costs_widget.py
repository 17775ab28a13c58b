"""Chapter 05's cost calculator: its view, its table, and the controls that drive it."""
import re

import matplotlib
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_support.widgets import costs as widget
from solutions import costs as C

matplotlib.use("Agg")

ANTHROPIC = "Anthropic claude-opus-4.6 (5-minute cache)"
SLIDERS = ("prefix_tokens", "step_tokens", "steps", "keep_recent", "summary_tokens",
           "output_tokens", "threshold")


def parts(box):
    """(sliders by name, provider, rules, pace, summaries, table) of a calculator."""
    left, right = box.children[0].children
    sliders = dict(zip(SLIDERS, left.children, strict=True))
    provider, rules, pace, summaries = right.children
    return sliders, provider, rules, pace, summaries, box.children[1]


# --------------------------------------------------------------------------- the view

def test_calculator_view_table_and_chart_agree_with_the_solution():
    prices = C.provider_presets()[ANTHROPIC]
    run = C.Run(steps=120)
    view = widget.calculator_view(run, prices)
    assert view["break_even"] == C.compaction_break_even(run, prices)
    for row in view["rows"]:
        assert view["curves"][row["key"]][-1] == pytest.approx(
            C.price_requests(C.simulate(row["key"], run, summary_calls=True), prices))
    page = widget.table_html(view)
    assert f"from step {view['break_even']} on" in page and "cache writes 6.25" in page
    figure = widget.cost_figure(view)
    axis = figure.axes[0]
    assert len(axis.get_lines()) == len(C.COST_STRATEGIES) + 1  # the break-even marker too
    assert [t.get_text() for t in axis.get_legend().get_texts()] == \
        [s.label for s in C.COST_STRATEGIES]


def test_calculator_says_when_compaction_does_not_pay():
    view = widget.calculator_view(C.SEED_RUN, C.SEED_PRICES)
    assert view["break_even"] is None
    assert "does not pay within 40 steps" in widget.table_html(view)


def test_the_one_hour_ttl_is_shown_and_billed_at_its_own_write_price():
    prices = C.provider_presets()[ANTHROPIC]
    rules = widget.RULES["Anthropic: prefix + end marked, 1-hour TTL"]
    view = widget.calculator_view(C.Run(steps=60), prices, rules)
    page = widget.table_html(view)
    assert "cache writes 10" in page and "1h TTL" in page and "cache_control at prefix and end" in page
    assert view["curves"][C.CostStrategy.FULL_CACHED][-1] == pytest.approx(C.price_requests(
        C.simulate("full_cached", C.Run(steps=60), rules, summary_calls=True),
        C.billed_prices(prices, rules)))


def test_table_headers_and_cells_are_spaced_apart():
    page = widget.table_html(widget.calculator_view(C.SEED_RUN, C.SEED_PRICES))
    headers = re.findall(r"<th style='([^']*)'>([^<]*)</th>", page)
    assert [name for _, name in headers] == ["strategy", "input tokens", "hit rate",
                                             "last request", "calls", "USD"]
    assert all("padding" in style for style, _ in headers)
    assert page.count("<td style='padding") == 6 * len(C.COST_STRATEGIES)


# --------------------------------------------------------------------------- the threshold

def test_threshold_range_runs_from_what_compaction_leaves_to_the_largest_request():
    low, high = widget.threshold_range(C.SEED_RUN)
    assert (low, high) == (15_800, 61_500)
    assert widget.threshold_range(C.Run(steps=2)) == (15_800, 15_800)  # never above the floor


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 20_000), st.integers(100, 10_000), st.integers(2, 300), st.integers(0, 40),
       st.integers(0, 5_000), st.integers(0, 500_000), st.booleans())
def test_the_threshold_always_fits_the_run(prefix, per_step, steps, keep, summary, value,
                                           following):
    run = C.Run(prefix, per_step, steps, keep, summary)
    threshold = widget.follow_threshold(run, value, following)
    low, high = widget.threshold_range(run)
    assert low <= threshold <= high
    C.compaction_schedule(run, threshold)  # never refused
    if following:
        assert threshold == min(max(C.default_threshold(run), low), high)
    elif low <= value <= high:
        assert threshold == value  # a threshold the user chose is kept while it fits


def test_the_threshold_slider_follows_the_run_until_the_user_moves_it():
    box = widget.cost_calculator()
    sliders, *_, table = parts(box)
    threshold = sliders["threshold"]
    assert threshold.value == C.default_threshold(C.SEED_RUN) == 27_800
    # keeping 20 recent steps leaves 33,800 tokens after a compaction: above the old 27,800
    sliders["keep_recent"].value = 20
    run = C.Run(keep_recent=20)
    assert (threshold.min, threshold.max) == widget.threshold_range(run) == (33_800, 61_500)
    assert threshold.value == min(C.default_threshold(run), 61_500) == 61_500
    assert "<table" in table.value and f"Compacting at {threshold.value:,} tokens" in table.value
    # a threshold the user chose stays, until the run can no longer use it
    threshold.value = 40_000
    sliders["steps"].value = 80
    assert threshold.value == 40_000 and "Compacting at 40,000 tokens" in table.value
    sliders["keep_recent"].value = 25  # a compaction now leaves 41,300 tokens
    assert threshold.value == threshold.min == 41_300
    assert "Compacting at 41,300 tokens" in table.value


def test_the_threshold_cannot_be_set_below_what_a_compaction_leaves():
    box = widget.cost_calculator()
    sliders, *_, table = parts(box)
    sliders["threshold"].value = 2_000
    assert sliders["threshold"].value == 15_800  # the slider stops at the floor
    assert "Compacting at 15,800 tokens" in table.value


def test_the_calculator_shows_errors_instead_of_crashing(monkeypatch):
    box = widget.cost_calculator()
    sliders, *_, table = parts(box)

    def refuse(*args, **kwargs):
        raise ValueError("threshold 2,000 is below what a compaction leaves behind")

    monkeypatch.setattr(widget, "calculator_view", refuse)
    sliders["steps"].value = 41
    assert "color:#b00" in table.value and "below what a compaction leaves behind" in table.value


# --------------------------------------------------------------------------- the controls

def test_labels_fit_and_read_outs_have_thousands_separators():
    box = widget.cost_calculator()
    sliders, provider, rules, pace, summaries, _ = parts(box)
    for slider in [*sliders.values(), pace]:
        assert slider.readout_format == ",", slider.description
        assert len(slider.description) <= 17, slider.description  # fits 10em
        assert slider.style.description_width == "10em"
    assert summaries.description == "count the summarising calls"
    assert summaries.indent is False and summaries.style.description_width == "initial"
    assert summaries.layout.width == "auto"  # the label takes the room it needs
    assert rules.options and all(len(label) <= 44 for label, _ in rules.options)  # (label, key) pairs


def test_calculator_controls_drive_the_table():
    box = widget.cost_calculator()
    sliders, provider, rules, pace, summaries, table = parts(box)
    assert "does not pay within 40 steps" in table.value  # the seed's run at the seed's prices
    provider.value = "OpenAI gpt-5.6-luna"
    sliders["steps"].value = 120
    luna = C.provider_presets()["OpenAI gpt-5.6-luna"]
    expected = widget.calculator_view(C.Run(steps=120), luna, widget.RULES[rules.value],
                                      sliders["threshold"].value, summaries.value)
    assert "OpenAI gpt-5.6-luna" in table.value and "cache writes 1.25" in table.value
    assert f"from step {expected['break_even']} on" in table.value
    assert widget.table_html(expected) == table.value
    summaries.value = False
    rows = C.strategy_table(C.Run(steps=120), luna, widget.RULES[rules.value],
                            sliders["threshold"].value, False)
    assert all(f"<td style='padding:2px 12px'>{r['calls']}</td>" in table.value for r in rows)
    rules.value = "1,024 minimum, 128-token blocks (OpenAI)"
    assert widget.table_html(widget.calculator_view(
        C.Run(steps=120), luna, C.OPENAI_RULES, sliders["threshold"].value, False)) == table.value


def test_the_pace_slider_sets_what_the_ttl_is_measured_against():
    box = widget.cost_calculator()
    sliders, provider, rules, pace, summaries, table = parts(box)
    provider.value = ANTHROPIC
    rules.value = "Anthropic: prefix + end marked, 5-min TTL"
    assert "a step every 30 s" in table.value
    pace.value = 600  # ten minutes between steps: every 5-minute entry has expired
    expired = C.Breakpoints(seconds_between_steps=600)
    assert "a step every 600 s" in table.value
    assert widget.table_html(widget.calculator_view(
        C.SEED_RUN, C.provider_presets()[ANTHROPIC], expired, sliders["threshold"].value,
        summaries.value)) == table.value
    assert "0.0%" in table.value.split("</tr>")[2]  # full history, cached: no hit at all
