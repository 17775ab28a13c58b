"""The compaction explorer's logic (lesson_support/widgets/compaction.py) and its widget."""
import re

import pytest

from lesson_support.widgets.compaction import (PALETTE, PROBLEM_COLOUR, compaction_explorer, explore,
                                       exploration_html, message_rows, messages_html,
                                       pair_colours, sample_run, sawtooth_svg)
from solutions.compaction import check_pairing, is_summary
from solutions.tokens import count_request_tokens


@pytest.fixture(scope="module")
def sample():
    return sample_run()


def test_sample_run_is_the_fixture_and_valid(sample):
    run, tools = sample
    assert check_pairing(run).ok and [t["function"]["name"] for t in tools] == [
        "read_file", "write_file", "run_command", "search_files"]


def test_a_call_and_its_result_share_a_colour(sample):
    run, _ = sample
    colours = pair_colours(run)
    ids = [c["id"] for m in run for c in m.get("tool_calls") or ()]
    assert list(colours) == ids  # every call, in order
    assert colours[ids[0]] == PALETTE[0] and colours[ids[len(PALETTE)]] == PALETTE[0]
    page = messages_html(run)
    for m in run:
        if m["role"] == "tool":
            chips = re.findall(rf'background:(#[0-9a-f]{{6}})[^>]*>{m["tool_call_id"]}</span>', page)
            assert chips == [colours[m["tool_call_id"]]] * 2  # on the call and on its result


def test_turn_aware_compaction_keeps_pairing_at_every_setting(sample):
    run, tools = sample
    total = count_request_tokens(run, tools)
    for keep in (0, 1, 4, 12):
        for threshold in (1500, 5000, total):
            result = explore(run, tools, keep, threshold, "turns")
            assert result.verdict_after.ok
            assert result.tokens_after == count_request_tokens(result.after, tools)
            assert (result.compacted_at == []) == (threshold >= total)


def test_the_naive_window_is_flagged_where_it_breaks(sample):
    run, tools = sample
    results = [explore(run, tools, keep, 5000, "naive") for keep in range(12)]
    broken = [r for r in results if not r.verdict_after.ok]
    assert broken and len(broken) < len(results)
    r = broken[0]
    rows = message_rows(r.after, r.verdict_after)
    flagged = [row for row in rows if row.problem]
    assert [row.index for row in flagged] == [r.verdict_after.index]
    assert f"solid {PROBLEM_COLOUR}" in messages_html(r.after, r.verdict_after)


def test_rows_mark_the_summary_and_escape_text():
    messages = [{"role": "system", "content": "<b>sys</b>"},
                {"role": "user", "content": "task"}]
    page = messages_html(messages)
    assert "&lt;b&gt;sys&lt;/b&gt;" in page and "<b>sys</b>" not in page
    run, _ = sample_run()
    after = explore(run, None, 2, 3000).after
    assert [r.summary for r in message_rows(after)] == [is_summary(m) for m in after]


def test_unknown_method_is_refused(sample):
    with pytest.raises(ValueError, match="unknown method 'random'"):
        explore(*sample, 2, 3000, method="random")


def test_sawtooth_has_one_point_per_step_and_marks_compactions(sample):
    run, tools = sample
    result = explore(run, tools, 4, 5000)
    svg = sawtooth_svg(result.sizes, 5000, result.compacted_at)
    points = re.search(r'points="([^"]+)"', svg).group(1).split()
    assert len(points) == len(result.sizes)
    with_peaks = sawtooth_svg(result.sizes, 5000, result.compacted_at, result.peaks)
    points = re.search(r'points="([^"]+)"', with_peaks).group(1).split()
    assert len(points) == len(result.sizes) + len(result.compacted_at)  # one extra point per drop
    assert svg.count("<circle") == len(result.compacted_at) >= 2
    assert sawtooth_svg([], 10, []) == "<svg/>"
    head, before, after = exploration_html(result, 5000)
    assert "pairing intact" in head and f"{len(result.compacted_at)} compaction(s)" in head


def test_the_widget_builds_and_reacts_to_its_sliders(sample):
    widget = compaction_explorer(*sample)
    sliders, method, header, panes = widget.children
    keep, threshold = sliders.children
    before = header.value
    threshold.value = threshold.max  # no compaction at all
    assert header.value != before and "0 compaction(s)" in header.value
    method.value = "naive"
    keep.value = 1
    threshold.value = 3000
    assert "HTTP 400" in header.value
