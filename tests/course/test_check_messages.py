"""A check's verdict in Chinese (course.check_messages): the hint and the assert's message of a
lab's check cell come from the catalogue, the values filled in; a self-test hint names the
section by number and by the Chinese lesson's title; the payload stays English."""
from __future__ import annotations

import pytest

import course.checks as checks
from course.check_messages import chinese_sections, fill, localised, templates
from course.checks import check


@pytest.fixture(autouse=True)
def fresh_verdicts():
    checks._verdicts.clear()
    yield
    checks._verdicts.clear()


def test_a_check_cells_hint_and_messages_are_templates_named_by_their_expressions():
    source = ('with check("check-x", hint="x must work"):\n'
              '    got = x()\n'
              '    assert got == 1, f"expected 1; got {got!r} of {len(got)}"\n'
              '    assert got, "x returned nothing"\n'
              '    if got is None:\n'
              '        raise AssertionError(f"{what}: x raised")\n')
    assert templates(source) == ["x must work", "expected 1; got {got} of {len(got)}", "x returned nothing",
                                 "{what}: x raised"]


def test_a_message_fills_its_chinese_template_and_one_that_does_not_fit_is_left():
    template = "{what}: report it at messages[{at}]; got {problems}"
    chinese = "{what}：在 messages[{at}] 处报告它；实际是 {problems}"
    assert fill("a robot: report it at messages[0]; got []", template, chinese) == \
        "a robot：在 messages[0] 处报告它；实际是 []"
    assert fill("something else", template, chinese) is None


def test_a_failing_check_of_lab_01_shows_chinese_and_keeps_an_english_payload(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    with check("check-validate-good-history",
               hint="validate_messages must return [] for a correct history, with parallel results in any order"):
        problems = ["messages[3]: no result"]
        if problems != []:      # the lab's assert (pytest would rewrite a bare one here)
            raise AssertionError(f"a correct history was reported as broken: {problems}")
    shown = capsys.readouterr().out
    assert shown == "✗ check-validate-good-history\n  一段正确的历史被报告为有问题：['messages[3]: no result']\n"
    assert checks.verdicts()["check-validate-good-history"].payload()["message"] == \
        "a correct history was reported as broken: ['messages[3]: no result']"
    assert "一段正确的历史被报告为有问题" in checks.tally()


def test_the_hint_is_chinese_and_the_students_own_exception_stays_as_raised(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")

    def validate_messages(messages):       # the student's code
        raise NotImplementedError("write validate_messages")

    with check("check-validate-good-history",
               hint="validate_messages must return [] for a correct history, with parallel results in any order"):
        validate_messages([])
    shown = capsys.readouterr().out
    assert "对正确的历史，validate_messages 必须返回 []，并行结果的顺序任意\n" in shown
    assert "NotImplementedError: write validate_messages" in shown


def test_a_self_test_hint_names_the_section_as_the_chinese_lesson_does(monkeypatch):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    message = "q1 is not right yet: re-read section 3, 'The second call: the whole history goes again', then try again"
    assert localised("check-self-test-q1", message) == "q1 还不对：请重读课程的第 3 节「第二次调用：全部历史再发一遍」，然后再试一次"
    assert chinese_sections("sections 2 to 4, from 'The first call' to 'The loop'") == \
        "第 2 到 4 节（从「第一次调用：模型请求调用工具」到「循环」）"


def test_in_english_nothing_changes(monkeypatch):
    monkeypatch.setenv("COURSE_LANGUAGE", "en")
    message = "a correct history was reported as broken: []"
    assert localised("check-validate-good-history", message) == message
