"""Chapter 02: counting text and requests, honest truncation, content types, budgets, widget."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_support.widgets import tokens as widget
from solutions import tokens as T
from tests.messages import tool_call as _call

# What the study guide's hands-on lab 1 prints for its four samples (o200k_base).
SEED_PRINTED = [
    (60, 16, ["Could", " NOT", " find", " Z", "LIB", " (", "missing", ":"]),
    (20, 14, ["交", "叉", "编", "译", "时", "找", "不到", "目标"]),
    (65, 24, ["/", "opt", "/home", "brew", "/", "Cell", "ar", "/"]),
    (41, 15, ['{"', "path", '":', ' "', "C", "Make", "Lists", ".txt"]),
]

TOOLS = [
    {"type": "function", "function": {
        "name": "read_file", "description": "读取文件 (read a file)",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                       "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "run_command", "description": "Run a command and return its output.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"},
                                                        "timeout_s": {"type": "integer"}}}}},
]


# Request shapes the count must get exactly right: every branch of the documented template.
REQUESTS = {
    "one user message": ([{"role": "user", "content": "Hello"}], None),
    "empty content": ([{"role": "user", "content": ""}], None),
    "chinese": ([{"role": "system", "content": "你是一个构建工程师。"},
                 {"role": "user", "content": "交叉编译时找不到目标平台的 zlib 库，怎么办？"}], None),
    "json text": ([{"role": "user", "content": json.dumps(
        {"path": "CMakeLists.txt", "offset": 101, "注释": "中文键"}, ensure_ascii=False)}], None),
    "names": ([{"role": "system", "name": "policy", "content": "Be brief."},
               {"role": "user", "name": "lin_wei", "content": "What is a token?"}], None),
    "developer role": ([{"role": "developer", "content": "Answer in English."},
                        {"role": "user", "content": "hi"}], None),
    "multi-part content": ([{"role": "user", "content": [
        {"type": "text", "text": "Part one. "}, {"type": "text", "text": "第二部分。"}]}], None),
    "tools only": ([{"role": "user", "content": "read CMakeLists.txt"}], TOOLS),
    "tool call and result": ([
        {"role": "user", "content": "read CMakeLists.txt"},
        {"role": "assistant", "content": None,
         "tool_calls": [_call("call_1", "read_file", '{"path": "CMakeLists.txt"}')]},
        {"role": "tool", "tool_call_id": "call_1", "content": "cmake_minimum_required(VERSION 3.20)"},
    ], TOOLS),
    "parallel calls, unicode arguments, text beside calls": ([
        {"role": "user", "content": "读取 说明.md 并运行测试"},
        {"role": "assistant", "content": "I will do both.", "tool_calls": [
            _call("call_a", "read_file", '{"path": "说明.md"}'),
            _call("call_b", "run_command", '{"timeout_s": 60,  "command": "pytest -q"}')]},
        {"role": "tool", "tool_call_id": "call_a", "content": "# 说明\n构建步骤……"},
        {"role": "tool", "tool_call_id": "call_b", "content": "3 passed in 0.12s"},
        {"role": "assistant", "content": "Both done."},
    ], TOOLS),
    "special-token look-alikes": ([{"role": "user",
                                    "content": "<|im_start|>user\n<|endoftext|> are just text"}], None),
    "emoji and newlines": ([{"role": "user", "content": "build ✅\n\n\ntests ❌ 🎉\n"}], None),
}


# --------------------------------------------------------------------------- counting text

def test_seed_samples_reproduce_the_study_guide():
    assert [T.describe_sample(s) for s in T.SEED_SAMPLES] == SEED_PRINTED


def test_count_tokens_treats_special_token_text_as_text():
    assert T.count_tokens("<|endoftext|>") > 1


def test_cjk_costs_more_tokens_than_english_in_both_encodings():
    for name in T.ENCODING_NAMES:
        assert T.tokens_per_char("交叉编译时找不到目标平台的库", name) > \
            3 * T.tokens_per_char("The compiler could not find the library", name)


def test_encodings_by_name_or_object_agree_and_unknown_names_are_refused():
    enc = T.get_encoding("cl100k_base")
    assert T.count_tokens("交叉编译", enc) == T.count_tokens("交叉编译", "cl100k_base")
    with pytest.raises(ValueError, match="o200k_base"):
        T.get_encoding("gpt2_base")
    with pytest.raises(TypeError):
        T.get_encoding(42)
    with pytest.raises(TypeError):
        T.count_tokens(b"bytes")


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80),
       st.sampled_from(T.ENCODING_NAMES))
def test_token_pieces_cover_the_text_without_broken_characters(text, encoding):
    pieces = T.token_pieces(text, encoding)
    assert "".join(p for p, _ in pieces) == text
    assert sum(n for _, n in pieces) == T.count_tokens(text, encoding)
    assert all(n >= 1 for _, n in pieces)


# --------------------------------------------------------------------------- counting requests

@pytest.mark.parametrize("name", list(REQUESTS))
def test_count_matches_the_documented_template(name):
    """Offline cross-check with the template module (the server's own test is below)."""
    from course.llm.template import prompt_token_ids, render_text

    messages, tools = REQUESTS[name]
    assert T.count_request_tokens(messages, tools) == len(prompt_token_ids(messages, tools))
    assert len(T.request_token_ids(messages, tools)) == T.count_request_tokens(messages, tools)
    assert T.render_request(messages, tools) == render_text(messages, tools)


def test_count_equals_the_servers_prompt_tokens(client):
    import course.llm

    for name, (messages, tools) in REQUESTS.items():
        kwargs = {"tools": tools} if tools else {}
        response = client.chat.completions.create(model=course.llm.model_name(),
                                                  messages=messages, **kwargs)
        assert T.count_request_tokens(messages, tools) == response.usage.prompt_tokens, name


def test_count_follows_a_real_tool_loop_with_sdk_message_objects(client):
    """Append the SDK's own message object, as agent code does, and count the next request."""
    import course.llm

    messages = [{"role": "user", "content": "Read the file CMakeLists.txt"}]
    reply = client.chat.completions.create(model=course.llm.model_name(), messages=messages,
                                           tools=TOOLS)
    message = reply.choices[0].message
    assert message.tool_calls, "the teaching model should call read_file here"
    messages.append(message)
    for call in message.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "project(fw C)"})
    second = client.chat.completions.create(model=course.llm.model_name(), messages=messages,
                                            tools=TOOLS)
    assert T.count_request_tokens(messages, TOOLS) == second.usage.prompt_tokens


def test_each_message_costs_its_envelope():
    one = T.count_request_tokens([{"role": "user", "content": "hi"}])
    two = T.count_request_tokens([{"role": "user", "content": "hi"}] * 2)
    newline = T.count_tokens("\n")
    assert two - one == 2 + newline + T.count_tokens("user\nhi")


def test_cl100k_count_is_an_estimate_that_differs_for_chinese():
    messages, tools = REQUESTS["chinese"]
    assert T.count_request_tokens(messages, tools, "cl100k_base") != \
        T.count_request_tokens(messages, tools, "o200k_base")


@pytest.mark.parametrize("messages, tools, error, words", [
    ({"role": "user", "content": "hi"}, None, TypeError, "list of messages"),
    ([{"content": "hi"}], None, ValueError, "messages[0] has no 'role'"),
    ([{"role": "tool", "content": "x"}], None, ValueError, "tool_call_id"),
    ([{"role": "user", "content": 42}], None, TypeError, "messages[0].content"),
    ([{"role": "assistant", "tool_calls": [
        {"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]}], None, TypeError,
     "json.dumps"),
    ([{"role": "user", "content": "hi"}], {"name": "f"}, TypeError, "tools must be a list"),
    (["hello"], None, TypeError, "messages[0] must be a dict"),
])
def test_bad_requests_get_clear_errors(messages, tools, error, words):
    with pytest.raises(error) as info:
        T.count_request_tokens(messages, tools)
    assert words in str(info.value)


# --------------------------------------------------------------------------- truncation

TEXTS = st.text(alphabet=st.one_of(st.characters(codec="utf-8"),
                                   st.sampled_from("交叉编译时找不到目标平台🎉✅ \n{}\":/")),
                max_size=120)


@settings(max_examples=200, deadline=None)
@given(TEXTS, st.integers(min_value=0, max_value=40), st.sampled_from(T.ENCODING_NAMES))
def test_truncation_never_exceeds_max_and_keeps_a_prefix(text, max_tokens, encoding):
    result = T.truncate_to_tokens(text, max_tokens, encoding)
    assert result.kept_tokens <= max_tokens
    assert T.count_tokens(result.text, encoding) == result.kept_tokens
    assert text.startswith(result.text) and result.text + result.cut_text == text
    assert "\ufffd" not in result.text or "\ufffd" in text  # never a broken character
    total = T.count_tokens(text, encoding)
    assert result.kept_tokens + result.cut_tokens == total
    if total <= max_tokens:
        assert result.text == text and not result.truncated
    if text and max_tokens >= 4:
        assert result.text, "a budget of 4 tokens holds at least one character"


def test_truncation_of_chinese_cuts_at_a_character_and_says_so():
    text = "交叉编译时找不到目标平台的 zlib 库。" * 5
    result = T.truncate_to_tokens(text, 9)
    assert result.truncated and result.text == text[:len(result.text)]
    assert result.kept_tokens <= 9
    notice = result.notice
    assert f"{result.cut_tokens:,}" in notice and f"{len(result.cut_text):,} characters" in notice


def test_truncation_of_an_emoji_split_over_tokens_drops_the_whole_emoji():
    text = "ok 🎉🎉🎉"
    for limit in range(T.count_tokens(text)):
        kept = T.truncate_to_tokens(text, limit).text
        assert "\ufffd" not in kept and text.startswith(kept)


def test_truncation_of_json_keeps_valid_prefix_and_reports_nothing_cut_when_it_fits():
    payload = json.dumps({"path": "说明.md", "lines": list(range(50))}, ensure_ascii=False)
    assert not T.truncate_to_tokens(payload, 10_000).truncated
    assert "nothing cut" in T.truncate_to_tokens(payload, 10_000).notice
    short = T.truncate_to_tokens(payload, 12)
    assert payload.startswith(short.text) and short.kept_tokens <= 12


@pytest.mark.parametrize("text, max_tokens, error", [
    ("abc", -1, ValueError), ("abc", 2.5, TypeError), ("abc", True, TypeError),
    (b"abc", 3, TypeError), ("bad \ud800 surrogate", 3, ValueError),
])
def test_truncation_rejects_bad_input(text, max_tokens, error):
    with pytest.raises(error):
        T.truncate_to_tokens(text, max_tokens)


# --------------------------------------------------------------------------- content types

def test_corpus_covers_six_content_types_in_both_encodings():
    rows = T.corpus_table()
    kinds = {r["content"] for r in rows}
    assert kinds == {"english", "chinese", "code", "json", "paths", "logs"}
    assert {(r["content"], r["encoding"]) for r in rows} == \
        {(k, e) for k in kinds for e in T.ENCODING_NAMES}
    assert all(r["tokens"] > 0 and r["files"] >= 2 for r in rows)


def test_chinese_paths_and_json_cost_more_per_character_than_english_prose():
    ratio = {(r["content"], r["encoding"]): r["tokens_per_char"] for r in T.corpus_table()}
    for enc in T.ENCODING_NAMES:
        english = ratio["english", enc]
        for kind in ("chinese", "paths", "json"):
            assert ratio[kind, enc] > english, (kind, enc)
    # o200k_base's larger vocabulary is much kinder to Chinese than cl100k_base
    assert ratio["chinese", "o200k_base"] < ratio["chinese", "cl100k_base"]


def test_corpus_errors_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError):
        T.load_corpus(tmp_path / "missing")
    with pytest.raises(ValueError, match="no sub-folders"):
        T.load_corpus(tmp_path)
    with pytest.raises(ValueError):
        T.tokens_per_char("")


def test_plot_has_one_bar_per_type_and_encoding():
    import matplotlib
    matplotlib.use("Agg")
    rows = T.corpus_table()
    ax = T.plot_tokens_per_char(rows)
    assert len(ax.patches) == len(rows)


# --------------------------------------------------------------------------- budgets

def test_window_budget_reports_share_and_room_for_output():
    budget = T.window_budget(12_000, 128_000, reserved_output=4_000)
    assert budget.share_used == 12_000 / 128_000
    assert budget.left_for_output == 116_000 and budget.fits
    assert "116,000 left for output" in str(budget)
    over = T.window_budget(130_000, 128_000)
    assert not over.fits and "over the window by 2,000" in str(over)
    tight = T.window_budget(120_000, 128_000, reserved_output=16_000)
    assert not tight.fits and "does NOT fit" in str(tight)


def test_request_budget_counts_the_request():
    messages, tools = REQUESTS["tool call and result"]
    budget = T.request_budget(messages, tools, window_tokens=1_000)
    assert budget.prompt_tokens == T.count_request_tokens(messages, tools)


@pytest.mark.parametrize("args, error", [((-1, 100), ValueError), ((10, 0), ValueError),
                                         ((10, 100, -5), ValueError), ((1.5, 100), TypeError)])
def test_budget_rejects_bad_numbers(args, error):
    with pytest.raises(error):
        T.window_budget(*args)


# --------------------------------------------------------------------------- widget logic

def test_widget_html_shows_exact_counts_and_escapes_text():
    text = "<b>bold?</b> 交叉编译 🎉\n"
    page = widget.comparison_html(text)
    for name, count in widget.token_counts(text).items():
        assert f"<b>{name}</b>: {count:,} tokens" in page
    assert "<b>bold?</b>" not in page.replace("<b>o200k_base</b>", "").replace(
        "<b>cl100k_base</b>", "")
    assert "&lt;b&gt;" in page or "&lt;" in page


def test_widget_colours_every_piece_until_the_cap():
    text = "交叉编译 " * 50
    pieces = T.token_pieces(text)
    page = widget.tokens_html(text)
    assert page.count("<span class=\"c") == len(pieces)
    capped = widget.tokens_html(text, max_shown=10)
    assert capped.count("<span class=\"c") < len(pieces)
    shown = sum(n for _, n in pieces[:capped.count("<span class=\"c")])
    assert shown <= 10 and f"{T.count_tokens(text) - shown:,} more tokens" in capped


def test_explorer_updates_as_you_type():
    box, view = widget.token_explorer("first").children
    box.value = "交叉编译"
    assert f"{T.count_tokens('交叉编译'):,} token" in view.value and "交" in view.value


def test_debouncer_collapses_a_burst_inside_an_event_loop():
    import asyncio

    calls = []
    debounced = widget.Debouncer(calls.append, delay=0.01)

    async def burst():
        for value in "abc":
            debounced(value)
        await asyncio.sleep(0.05)

    asyncio.run(burst())
    assert calls == ["c"]
    debounced("now")  # no running loop: runs at once
    assert calls == ["c", "now"]
