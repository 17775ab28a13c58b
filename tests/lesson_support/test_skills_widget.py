"""The skill router's logic (lesson_support/widgets/skills.py) and its wiring."""
import pytest

from lesson_support.skills import PLACEMENTS, course_skills
from lesson_support.widgets import skills as widget

SKILLS = course_skills()


@pytest.mark.parametrize("request_text, expected", [
    ("Make a slide deck from the paper inbox/attention.pdf.", "slides-from-paper"),
    ("Why did the CI build fail on main? The failed job is job-4711.", "ci-triage"),
    ("Build libpng for aarch64 with a toolchain file", "cross-compile"),
    ("Write a short report of inbox/sales.csv with totals per region.", "csv-report"),
    ("What is the weather in Vancouver?", None),
])
def test_the_router_picks_what_the_model_would(request_text, expected):
    matches = widget.match_scores(request_text, SKILLS)
    assert widget.chosen(matches) == expected
    assert [m.shared for m in matches] == sorted((m.shared for m in matches), reverse=True)


def test_layers_of_a_skill_with_a_sub_document():
    rows = widget.layers("Make a slide deck from the paper inbox/attention.pdf.", SKILLS)
    assert [r[0] for r in rows] == ["1 catalogue", "2 body", "3 file"]
    assert "html-to-slides.md" in rows[2][1] and all(r[2] > 0 for r in rows)
    assert [r[0] for r in widget.layers("What is the weather in Vancouver?", SKILLS)] == ["1 catalogue"]


def test_placement_effect_predicts_the_cache():
    request = "Make a slide deck from the paper inbox/attention.pdf."
    effect = {p: [r["cached_tokens"] for r in widget.placement_effect(p, request, SKILLS)]
              for p in PLACEMENTS}
    assert effect["system prompt"][2] < effect["catalogue at the end"][2]
    assert effect["file in the middle"][3] < effect["catalogue at the end"][3]
    assert widget.placement_effect("system prompt", "What is the weather?", SKILLS) == []


def test_view_html_and_the_widget():
    text = widget.view_html("Why did the CI build fail?", "system prompt", SKILLS)
    assert "ci-triage" in text and "<table" in text and "no skill to load" not in text
    assert "loads no skill" in widget.view_html("hello", "system prompt", SKILLS)
    pytest.importorskip("ipywidgets")
    box = widget.skill_router("Why did the CI build fail?")
    box.children[0].value = "Make a slide deck from the paper inbox/attention.pdf."
    assert "slides-from-paper" in box.children[2].value
