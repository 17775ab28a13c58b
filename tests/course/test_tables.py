"""course.tables.text_table: the one text-table printer the lessons' tables go through."""
import pytest

from course.tables import text_table


def test_columns_are_as_wide_as_their_widest_cell_and_aligned_per_column():
    assert text_table(["strategy", "tokens"], [["full", "1,200"], ["compact", 300]], "<>") == (
        "strategy tokens\n"
        "full      1,200\n"
        "compact     300")


def test_given_widths_pad_like_an_f_string_and_a_wider_cell_pushes_its_line_right():
    table = text_table(["a", "b"], [["long cell", "1"], ["x", "22"]], "<>", widths=[4, 3])
    assert table.splitlines() == [f"{'a':<4} {'b':>3}", f"{'long cell':<4} {'1':>3}", f"{'x':<4} {'22':>3}"]


def test_width_zero_leaves_a_column_unpadded_and_a_short_row_ends_after_its_last_cell():
    table = text_table(["n", "what"], [["1", "first"], ["22"]], "><", widths=[3, 0], sep="  ")
    assert table.splitlines() == ["  n  what", "  1  first", " 22"]


def test_one_separator_per_gap_a_rule_under_the_headers_and_stripped_lines():
    table = text_table(["a", "b", "c"], [["1", "2", ""]], "<<<", sep=["", " | "], rule="-", strip=True)
    assert table.splitlines() == ["ab | c", "------", "12 |"]


def test_the_column_spec_must_fit_the_headers():
    with pytest.raises(ValueError, match="align"):
        text_table(["a", "b"], [], "<")
    with pytest.raises(ValueError, match="align"):
        text_table(["a"], [], "^")
    with pytest.raises(ValueError, match="sep"):
        text_table(["a", "b"], [], "<<", sep=[" ", " "])
    with pytest.raises(ValueError, match="more cells"):
        text_table(["a"], [["1", "2"]], "<")
