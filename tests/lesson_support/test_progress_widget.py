"""The progress bar long lesson cells show (lessons 11, 12, 15): it counts each piece of work,
says which one finished, and speaks the course's language."""
from __future__ import annotations

import pytest

import course.i18n as i18n
from lesson_support.widgets.progress import Progress


@pytest.fixture(autouse=True)
def language(monkeypatch):
    for name in ("COURSE_LANGUAGE", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    i18n._resolve.cache_clear()
    yield monkeypatch
    i18n._resolve.cache_clear()


def test_progress_counts_each_step_and_names_it():
    progress = Progress(3, "the ablation")
    assert (progress.bar.value, progress.bar.max, progress.label.value) == (0, 3, "0 of 3")
    progress.step("baseline")
    progress.step("tone casual")
    assert progress.bar.value == 2 and progress.label.value == "2 of 3: tone casual"
    assert progress.bar.description == "the ablation"


def test_progress_in_chinese(language):
    language.setenv("COURSE_LANGUAGE", "zh-CN")
    progress = Progress(2, "replaying")
    assert progress.label.value == "0 / 2"
    progress.step("baseline")
    assert progress.label.value == "1 / 2：baseline"
