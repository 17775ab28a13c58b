"""The widgets speak the course's language (course/i18n.py): Chinese labels, buttons and read-outs
under COURSE_LANGUAGE=zh-CN, the same English as before by default, and the same values either
way (a translated label never changes what a control selects)."""
from __future__ import annotations

import pytest

import lesson_support.widgets.agent_loop as agent_loop
import lesson_support.widgets.costs as costs
import lesson_support.widgets.kv_cache as kv_cache
import lesson_support.widgets.real_model as real_model
import lesson_support.widgets.tokens as tokens


pytestmark = pytest.mark.usefixtures("english_unless_told")  # tests/conftest.py


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")


def stuck_steps() -> list[dict]:
    call = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q":"x"}'}}
    again = {**call, "id": "c2"}
    first = {"request": [{"role": "user", "content": "find x"}],
             "reply": {"role": "assistant", "content": None, "tool_calls": [call]},
             "prompt_tokens": 40, "completion_tokens": 5}
    second = {"request": [*first["request"], first["reply"],
                          {"role": "tool", "tool_call_id": "c1", "content": "nothing"}],
              "reply": {"role": "assistant", "content": None, "tool_calls": [again]},
              "prompt_tokens": 61, "completion_tokens": 5}
    return [first, second]


def test_the_agent_stepper_read_outs_in_english_are_unchanged():
    steps = stuck_steps()
    assert agent_loop.run_outcome(steps) == ("stopped by the iteration limit after 2 API calls, "
                                             "still asking for tools")
    assert agent_loop.run_outcome(steps[:1]) == ("stopped by the iteration limit after 1 API call, "
                                                 "still asking for tools")
    assert agent_loop.step_summary(steps, 1) == (
        "API call 2 of 2: sent 3 messages, 61 prompt tokens; got back 1 tool call(s), 1 of them "
        "repeating an earlier call; the limit stops the run here")


def test_the_agent_stepper_in_chinese(chinese):
    steps = stuck_steps()
    assert agent_loop.run_outcome(steps) == "经过 2 次 API 调用后被迭代上限终止，仍在请求调用工具"
    assert agent_loop.step_summary(steps, 1) == (
        "第 2 次 API 调用（共 2 次）：发送 3 条消息、61 个提示 token；回复：1 个工具调用，其中 1 个重复"
        "了之前的调用；迭代上限在这里终止了运行")
    answered = [{**steps[0], "reply": {"role": "assistant", "content": "x"}}]
    assert agent_loop.step_summary(answered, 0).endswith("个提示 token；回复：最终回答")
    page = agent_loop.step_html(steps, 1)
    assert "请求：发送的消息" in page and "重复了之前的调用" in page
    box = agent_loop.agent_stepper({"卡住的运行": steps})
    buttons = [c.description for c in box.children[1].children[:2]]
    assert buttons == ["◀ 上一步", "下一步 ▶"]


def test_the_kv_cache_explorer_in_chinese(chinese):
    box = kv_cache.kv_cache_explorer(("a", "b", "c"))
    cache_button, reset_button, label = box.children[1].children
    assert (cache_button.description, reset_button.description) == ("缓存这个提示", "重置")
    assert "已缓存的提示：" in label.value
    view = kv_cache.explorer_view(("a", "b", "c"), ("a", "x", "c"))
    assert kv_cache.summary_line(view) == ("第一处不同在位置 1：每层 3 行中保留 1 行，2 行必须重新计算，"
                                           "2 层共 4 个 K/V 行（复用了 33% 的提示）。")
    assert "第 1 层" in kv_cache.row_map_html(view)


def columns(text: str) -> int:
    """The width of a label in columns: a CJK character takes two."""
    return sum(2 if ord(c) >= 0x2E80 else 1 for c in text)


def test_the_cost_calculator_in_chinese_selects_the_same_rules(chinese):
    box = costs.cost_calculator()
    sliders_box, options_box = box.children[0].children
    descriptions = [s.description for s in sliders_box.children]
    assert descriptions == ["固定前缀", "每步 token", "步数", "保留最近步数", "摘要 token", "每步输出",
                            "压缩阈值"]
    provider, rules, pace, summaries = options_box.children
    assert (provider.description, rules.description, summaries.description) == (
        "价格", "缓存", "计入生成摘要的调用")
    assert rules.label == "每个共享的 token（同学习指南）"
    assert rules.value == "every shared token (as the study guide)"  # what RULES is keyed by
    assert all(columns(label) <= 44 for label in rules._options_labels)  # as the English fit


def test_the_cost_calculators_rules_are_listed_in_english_by_default():
    box = costs.cost_calculator()
    rules = box.children[0].children[1].children[1]
    assert list(rules._options_labels) == list(costs.RULES)


def test_the_token_explorer_counts_in_chinese(chinese):
    head = tokens.tokens_html("hi", "o200k_base").split("<div class='cetok'>")[0]
    assert head == "<div><b>o200k_base</b>: 1 个 token，2 个字符（每个字符 0.50 个 token）</div>"


def test_the_token_explorer_counts_in_english_are_unchanged():
    head = tokens.tokens_html("hi", "o200k_base").split("<div class='cetok'>")[0]
    assert head == "<div><b>o200k_base</b>: 1 token, 2 characters (0.50 tokens per character)</div>"


def test_the_agent_composer_of_chapter_15_speaks_chinese(chinese):
    pytest.importorskip("ipywidgets")
    import lesson_support.widgets.architecture as architecture

    row = {"design": "ten atomic", "mode": "fresh", "scheme": "one key", "tokens": 1000, "cached": 800,
           "hit_rate": 0.8, "cost": 0.01, "errors": 1.5, "data": 20, "wall_s": 2.0}
    shown = architecture.summary_html(row)
    assert "<th>命中率</th>" in shown and "<th>动作空间</th>" not in shown, shown
    assert "搜索耗时（秒）" in shown and "1,000" in shown and "ten atomic" in shown


def test_the_cache_explorer_of_chapter_16_speaks_chinese(chinese):
    measured = {"length": 300, "scenario": "end_change", "n": 3, "prompt_tokens": 300, "ttft_median_s": 0.6,
                "ttft_min_s": 0.3, "ttft_max_s": 1.2, "ttft_q1_s": 0.6, "ttft_q3_s": 0.6,
                "evaluated_median": 30, "cached_median": 270, "of_cold": 0.1}
    compared = {"length": 300, "scenario": "end_change", "real_ttft_s": 0.6, "real_of_cold": 0.1,
                "real_cached": 270, "sim_ttft_s": 0.27, "sim_of_cold": 1.0, "sim_cached": 0, "verdict": "disagree",
                "why": "llama.cpp reuses any shared prefix; the simulated provider caches nothing under 1,024 tokens"}
    view = real_model.scenario_view({"summary": [measured], "comparison": [compared]}, 300, "end_change")
    line = real_model.scenario_line(view)
    assert line.startswith("300 个 token 时修改末行：SmolLM2 在 300 个提示 token 中计算了 30 个（270 个取自缓存）")
    assert "教学模型模拟" in line and "二者不一致" in line and "模拟的服务商在 1,024 个 token 以下" in line
    assert "SmolLM2 实测" in real_model.bars_html(view) and "首 token 时间" in real_model.bars_html(view)
