"""The KV-cache explorer's logic (lesson_support/widgets/kv_cache.py) and its wiring."""
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_support.widgets import kv_cache as widget

TOKENS = widget.DEFAULT_TOKENS


def edited(position: int, token: str = "EDIT") -> list[str]:
    tokens = list(TOKENS)
    tokens[position] = token
    return tokens


def test_editing_the_time_keeps_only_the_rows_before_it():
    view = widget.explorer_view(TOKENS, edited(3, "10:31"))
    assert view["error"] is None
    assert (view["plan"].kept, view["plan"].recompute) == (3, len(TOKENS) - 3)
    assert view["recompute_rows"] == 2 * (len(TOKENS) - 3)
    assert view["changed"] == [[3], list(range(3, len(TOKENS)))]
    assert "position 3: 3 of 14 rows survive" in widget.summary_line(view)
    assert "22 K/V rows over 2 layers" in widget.summary_line(view)


@settings(max_examples=14)
@given(st.integers(0, len(TOKENS) - 1))
def test_any_single_edit_keeps_exactly_its_position_in_rows(position):
    view = widget.explorer_view(TOKENS, edited(position))
    assert view["plan"].kept == position
    grid = widget.row_map_html(view)
    assert grid.count(">kept<") == 2 * position
    assert grid.count(">new<") + grid.count(">same<") == 2 * (len(TOKENS) - position)
    # layer 1: only the edited row differs; the rest after it are recomputed yet the same
    assert grid.count(">same<") == len(TOKENS) - position - 1


def test_the_last_tokens_weights_are_shown_for_every_layer():
    view = widget.explorer_view(TOKENS, TOKENS)
    assert len(view["weights"]) == 2
    assert all(abs(sum(w) - 1) < 1e-9 and len(w) == len(TOKENS) for w in view["weights"])
    bars = widget.weights_html(view)
    assert bars.count("layer ") == 2 and "Attention of the last token (?)" in bars
    assert "Nothing changed" in widget.summary_line(view)


def test_an_empty_box_is_reported_not_raised_and_tokens_are_escaped():
    view = widget.explorer_view(TOKENS, edited(5, " "))
    assert "position 5 has no token" in widget.summary_line(view)
    assert widget.row_map_html(view) == "" and widget.weights_html(view) == ""
    view = widget.explorer_view(TOKENS, edited(2, "<b>"))
    assert "&lt;b&gt;" in widget.row_map_html(view) and "<b>" not in widget.row_map_html(view)


def test_the_widget_updates_when_a_token_is_edited_and_cached():
    box = widget.kv_cache_explorer()
    boxes = box.children[0].children
    cache_button, reset_button, _ = box.children[1].children
    summary, grid = box.children[2], box.children[3]
    assert "Nothing changed" in summary.value
    boxes[3].value = "10:31"
    assert "position 3: 3 of 14" in summary.value and grid.value.count(">kept<") == 6
    cache_button.click()  # the edited prompt is now the cached one
    assert "Nothing changed" in summary.value
    boxes[10].value = "Was"
    assert "position 10: 10 of 14" in summary.value
    boxes[0].value = ""
    cache_button.click()  # an empty box is never cached
    boxes[0].value = "<|im_start|>"
    assert "position 10" in summary.value
    reset_button.click()
    assert "Nothing changed" in summary.value and boxes[3].value == "10:30"
