"""A check's verdict in Chinese (course.check_messages): the hint and the assert's message of a
lab's check cell come from the catalogue, the values filled in; a self-test hint names the
section by number and by the Chinese lesson's title; the payload stays English."""
from __future__ import annotations

import json
import re

import pytest

import course.checks as checks
from course.check_messages import chinese_sections, fill, localised, templates
from course.checks import check
from course.paths import LABS_DIR


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


def test_a_message_gets_its_own_template_not_a_wider_one_of_the_same_check(monkeypatch):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    # lab 11's check has "step {step['step']}: {check_pairing(context)}" first, which fits too
    assert localised("check-layers-run-pairing", "step 4: over the window") == "第 4 步：超出了窗口"


def test_in_english_nothing_changes(monkeypatch):
    monkeypatch.setenv("COURSE_LANGUAGE", "en")
    message = "a correct history was reported as broken: []"
    assert localised("check-validate-good-history", message) == message


# ------------------------------------------------------------------ no English left to a Chinese student
# What may stay Latin in a Chinese verdict: code (`…`), a value filled in ({…}), a quoted literal or
# UI label ('…', "…"), an identifier (snake_case, dotted, called or indexed) and single words the
# glossary keeps (token, dict, id, Agent, JSON). An English phrase is three plain words in a row;
# a section title in 「」 with no Chinese is one the Chinese lesson was not found to have.
_KEPT = re.compile(r"`[^`]*`|\{[^{}]*\}|'[^']*'|\"[^\"]*\"|“[^”]*”|《[^》]*》|「[^」]*」")
_WORDS = re.compile(r"(?<![\w.])[A-Za-z]+(?:-[A-Za-z]+)*(?: [A-Za-z]+(?:-[A-Za-z]+)*){2,}(?![\w.(\[])")


def _english_in(chinese: str) -> list[str]:
    """The English phrases and untranslated titles left in a Chinese verdict."""
    found = [title for title in re.findall(r"「[^」]*」", chinese) if not re.search(r"[\u4e00-\u9fff]", title)]
    prose = _KEPT.sub(" ", chinese)
    found += _WORDS.findall(prose)
    if not found and re.search(r"[A-Za-z]{3}", prose) and not re.search(r"[\u4e00-\u9fff]", chinese):
        found.append(chinese)       # nothing translated at all
    return found


def test_english_left_in_a_chinese_verdict_is_found():
    assert _english_in("第 {step['step']} 步：over the window") == ["over the window"]
    assert _english_in("q3 还不对：请重读课程的第 3 节「The KV cache, for real」，然后再试一次") == \
        ["「The KV cache, for real」"]
    assert _english_in("select 按 priority x (0.7 x relevance + 0.3 x recency) 打分，并排除低于 min_relevance 的数据包") == []
    assert _english_in("有了你的状态栏，模型应读到 '3/3 max, limit reached'；它说的是 {answer}") == []
    assert _english_in("validate_messages must return [] for a correct history") == ["for a correct history"]
    assert _english_in("API key 是凭据") == []


def _every_check_message():
    """(lab, key, template) of every hint and assert message of every released lab."""
    for path in sorted(LABS_DIR.glob("*_lab.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            key = cell.get("metadata", {}).get("course", {}).get("key")
            if key and "check" in cell.get("metadata", {}).get("tags", []):
                for template in templates("".join(cell["source"])):
                    yield path.name, key, template


def test_no_hint_or_check_message_shows_a_chinese_student_english(monkeypatch):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    messages = list(_every_check_message())
    assert len(messages) > 1000
    english = [f"{lab} {key}: {localised(key, template)!r} leaves {left}"
               for lab, key, template in messages if (left := _english_in(localised(key, template)))]
    assert not english, f"{len(english)} Chinese verdicts show English:\n" + "\n".join(english)
