"""Chapter 18's bill explorer: the prefix it draws for the servers connected and the way their
tools are offered, and the session it prices with chapter 05's calculator."""
from __future__ import annotations

import pytest

from lesson_support.widgets.mcp import (bill_explorer, bill_line, prefix_html, prefix_segments,
                                        session_bill)
from solutions.costs import Prices

pytestmark = pytest.mark.usefixtures("english_unless_told")  # tests/conftest.py

SERVERS = {"files": {"tools": 10, "schema_tokens": 3_000, "catalogue_tokens": 200},
           "tickets": {"tools": 40, "schema_tokens": 12_000, "catalogue_tokens": 800}}
PRICES = Prices(input=1.0, cached_input=0.1, output=0.0, name="test prices")


def test_every_schema_puts_each_connected_servers_schemas_after_the_system_prompt_in_order():
    segments = prefix_segments(SERVERS, ["tickets", "files"], "every_schema", system_tokens=500)
    assert [(s["part"], s["server"], s["tokens"]) for s in segments] == [
        ("system", None, 500), ("schema_tokens", "tickets", 12_000), ("schema_tokens", "files", 3_000)]


def test_on_demand_carries_the_catalogues_and_then_the_schemas_loaded():
    segments = prefix_segments(SERVERS, ["files", "tickets"], "on_demand", 500, loaded_tokens=700)
    assert [(s["part"], s["tokens"]) for s in segments] == [
        ("system", 500), ("catalogue_tokens", 200), ("catalogue_tokens", 800), ("loaded", 700)]
    assert prefix_segments(SERVERS, [], "on_demand", 500) == [{"part": "system", "server": None,
                                                               "tokens": 500}]


def test_bad_choices_and_figures_are_refused_with_what_exists():
    with pytest.raises(ValueError, match="choose one of every_schema, on_demand"):
        prefix_segments(SERVERS, ["files"], "lazy", 500)
    with pytest.raises(ValueError, match="the servers are files, tickets"):
        prefix_segments(SERVERS, ["github"], "every_schema", 500)
    with pytest.raises(ValueError, match="'files': schema_tokens must be a whole number"):
        prefix_segments({"files": {**SERVERS["files"], "schema_tokens": -1}}, ["files"], "on_demand", 0)
    with pytest.raises(ValueError, match="at least one request"):
        session_bill(1_000, 0, 100, PRICES)


def test_the_session_is_priced_with_no_cache_and_with_the_previous_request_read_from_the_cache():
    bill = session_bill(prefix_tokens=1_000, requests=3, turn_tokens=100, prices=PRICES)
    # prompts 1,100 + 1,200 + 1,300 = 3,600; cached 0 + 1,100 + 1,200 = 2,300
    assert bill["prompt_tokens"] == 3_600 and bill["cached_tokens"] == 2_300
    assert bill["uncached_usd"] == pytest.approx(3_600 / 1e6)
    assert bill["cached_usd"] == pytest.approx((1_300 * 1.0 + 2_300 * 0.1) / 1e6)
    assert bill["prefix_share"] == pytest.approx(3_000 / 3_600)


def test_the_line_says_what_the_tools_add_and_both_prices():
    segments = prefix_segments(SERVERS, ["files"], "every_schema", 500)
    bill = session_bill(3_500, 2, 100, PRICES)
    assert bill_line(segments, bill, PRICES) == (
        "The tools add 3,000 tokens to every request, 82% of all 7,300 prompt tokens of 2 requests. "
        "At the prices of test prices, the session costs $0.0073 with no cache and $0.0041 when each "
        "request reads the one before from the cache (1.8x less).")  # 3,600 + 3,700; 3,700 missed + 3,600 hit


def test_the_bar_names_every_part_in_order_and_escapes_server_names():
    servers = {"<b>evil</b>": SERVERS["files"]}
    page = prefix_html(prefix_segments(servers, ["<b>evil</b>"], "every_schema", 500), turn_tokens=100)
    assert "<b>evil</b>" not in page and "&lt;b&gt;evil&lt;/b&gt;: schemas 3,000" in page
    assert page.index("system prompt 500") < page.index("schemas 3,000") < page.index("conversation 100")


def test_the_explorer_wires_its_controls_to_the_read_out():
    widget = bill_explorer(SERVERS, {PRICES.name: PRICES}, system_tokens=500, turn_tokens=100)
    toggles, mode, requests, preset, out = widget.children
    assert [t.value for t in toggles.children] == [True, False]
    assert "add 3,000 tokens" in out.value
    toggles.children[1].value = True  # connecting the second server adds its schemas
    assert "add 15,000 tokens" in out.value
    mode.value = "on_demand"  # the catalogues instead
    assert "add 1,000 tokens" in out.value
    requests.value = 1
    assert "of 1 requests" in out.value and "$0.0016 with no cache and $0.0016" in out.value


def test_the_labels_and_the_read_out_in_chinese(monkeypatch):
    monkeypatch.setenv("COURSE_LANGUAGE", "zh-CN")
    page = prefix_html(prefix_segments(SERVERS, ["files"], "on_demand", 500), turn_tokens=100)
    assert "系统提示 500" in page and "files：目录 200" in page and "对话 100" in page
    widget = bill_explorer(SERVERS, {PRICES.name: PRICES}, system_tokens=500, turn_tokens=100)
    _, mode, requests, preset, out = widget.children
    assert [label for label, _ in mode.options] == ["每个请求带每个 schema", "目录加按需加载 schema"]
    assert mode.value == "every_schema" and requests.description == "请求数" and preset.description == "价格"
    assert out.value.count("工具给每个请求增加 3,000 个 token") == 1
