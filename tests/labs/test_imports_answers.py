"""An exercise that imports the reference answers is graded as the stub, including when the
answer comes through lesson_support (whose widgets and harnesses import solutions)."""
import pytest

from course.labs import imports_answers


@pytest.mark.parametrize("source", [
    "from solutions.compaction import compact",
    "import solutions.tokens as t",
    "compact = __import__('solutions.compaction').compaction.compact",
    "from lesson_support.widgets.compaction import compact",
    "from lesson_support.widgets.compaction import *",
    "import lesson_support.widgets.compaction as w\n\ndef compact(turns, budget):\n    return w.compact(turns, budget)",
    "def compact(turns, budget):\n    from lesson_support.widgets.compaction import compact as c\n    return c(turns, budget)",
])
def test_answers_imported_directly_or_through_lesson_support_are_caught(source):
    assert imports_answers(source)


@pytest.mark.parametrize("source", [
    "def compact(turns, budget):\n    return turns[-budget:]",
    "from lesson_support.status_bar import load_run  # a fixture loader, not an answer",
    "from lesson_support.no_such_module import compact",
    "def broken(:\n    pass",
    "import json, re\nfrom collections import Counter",
])
def test_own_code_and_fixture_loaders_are_not_flagged(source):
    assert not imports_answers(source)
