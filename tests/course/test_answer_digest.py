"""Self-test answers are compared by digest: the same answer, written differently, matches."""
import hashlib

import pytest
from hypothesis import given, strategies as st

from course.checks import answer_digest, normalised_answer


@pytest.mark.parametrize("written,expected", [
    ("b", "b"), ("B", "b"), (" b ", "b"), ("(b)", "b"), ("b)", "b"), ("b.", "b"),
    ("c, a", "ac"), ("a c", "ac"), ("CA", "ac"), ("a and c", "ac"), ("a;c;a", "ac"),
    (1152, "1152"), (1152.0, "1152"), ("1152", "1152"), ("1,152", "1152"), (" 1 152 ", "1152"),
    (1.5, "1.5"), ("1.50", "1.5"), (0.1 + 0.2, "0.3"), (-3, "-3"), (True, "true"),
    ("Replace", "replace"), ("  the   end ", "the end"),
])
def test_answers_are_normalised(written, expected):
    assert normalised_answer(written) == expected


def test_the_digest_is_the_sha256_of_the_normalised_answer():
    assert answer_digest(" B") == hashlib.sha256(b"b").hexdigest() == answer_digest("b")
    assert answer_digest(1152.0) == answer_digest(1152) == answer_digest("1,152")
    assert answer_digest("b") != answer_digest("c") and answer_digest(2) != answer_digest(3)
    assert answer_digest("ac") != answer_digest("a")  # one option of two is not the answer


@given(st.integers(min_value=-10**12, max_value=10**12))
def test_a_whole_number_matches_itself_as_int_float_and_text(n):
    assert answer_digest(n) == answer_digest(float(n)) == answer_digest(str(n)) == answer_digest(f"{n:,}")


@given(st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=8))
def test_option_letters_match_in_any_order_and_case(letters):
    expected = "".join(sorted(set(letters)))
    assert normalised_answer(", ".join(letters)) == expected
    assert normalised_answer(" ".join(letters).upper()) == expected
