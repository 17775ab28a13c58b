"""course.usage.read_usage: one reading of `usage` for every provider shape, None never 0."""
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai.types import CompletionUsage

from course.usage import NOT_REPORTED, Usage, describe, read_usage

counts = st.integers(min_value=0, max_value=10**9)


def test_openai_shape_from_the_sdk_object():
    usage = CompletionUsage.model_validate({
        "prompt_tokens": 2006, "completion_tokens": 300, "total_tokens": 2306,
        "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0}})
    assert read_usage(usage) == Usage(2006, 300, 1920, None, "openai")


def test_openai_cache_writes_when_reported():
    usage = {"prompt_tokens": 2006, "completion_tokens": 3,
             "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 1920}}
    assert read_usage(usage) == Usage(2006, 3, 0, 1920, "openai")


def test_deepseek_shape_from_the_sdk_object_keeps_its_extra_fields():
    usage = CompletionUsage.model_validate({
        "prompt_tokens": 1515, "completion_tokens": 30, "total_tokens": 1545,
        "prompt_cache_hit_tokens": 1408, "prompt_cache_miss_tokens": 107})
    assert read_usage(usage) == Usage(1515, 30, 1408, None, "deepseek")


def test_deepseek_fields_win_over_prompt_tokens_details():
    usage = {"prompt_tokens": 100, "completion_tokens": 1, "prompt_cache_hit_tokens": 64,
             "prompt_cache_miss_tokens": 36, "prompt_tokens_details": {"cached_tokens": 0}}
    assert read_usage(usage).cached == 64


def test_ollama_shape_reports_no_cache_figure():
    usage = read_usage({"prompt_tokens": 26, "completion_tokens": 5, "total_tokens": 31})
    assert usage == Usage(26, 5, None, None, "plain")
    assert usage.uncached is None
    assert "cached not reported by this provider" in str(usage)


def test_details_without_cached_tokens_are_not_a_zero():
    """vLLM may send prompt_tokens_details with cached_tokens null: that is not 0 cached."""
    for details in (None, {}, {"cached_tokens": None}):
        usage = {"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": details}
        assert read_usage(usage).cached is None
        assert read_usage(usage).provider_shape == "plain"


def test_anthropic_extras_with_prompt_tokens():
    usage = CompletionUsage.model_validate({
        "prompt_tokens": 3000, "completion_tokens": 12, "total_tokens": 3012,
        "cache_read_input_tokens": 2048, "cache_creation_input_tokens": 900})
    assert read_usage(usage) == Usage(3000, 12, 2048, 900, "anthropic")


def test_anthropic_native_input_tokens_exclude_the_cache():
    usage = {"input_tokens": 52, "output_tokens": 12, "cache_read_input_tokens": 2048,
             "cache_creation_input_tokens": 900}
    assert read_usage(usage) == Usage(3000, 12, 2048, 900, "anthropic")


def test_the_course_flat_records():
    """Records such as lesson_support's RequestRecord or the status bar's rows read as well."""
    from typing import NamedTuple

    class Record(NamedTuple):
        call: int
        prompt_tokens: int
        cached_tokens: int | None
        completion_tokens: int

    @dataclass
    class Row:
        prompt_tokens: int
        cached_tokens: int | None
        completion_tokens: int = 0

    assert read_usage(Record(1, 1280, 1280, 8)) == Usage(1280, 8, 1280, None, "record")
    assert read_usage(Row(1280, None)) == Usage(1280, 0, None, None, "record")
    assert read_usage({"prompt_tokens": 9, "cached_tokens": 0, "cache_write_tokens": 9}) == \
        Usage(9, None, 0, 9, "record")


def test_no_usage_at_all():
    assert read_usage(None) == Usage(None, None, None, None, "none")
    assert str(read_usage(None)).startswith(f"prompt {NOT_REPORTED}")


def test_describe():
    assert describe(None) == "not reported by this provider"
    assert describe(1280) == "1,280"
    assert describe(1280, "d") == "1280"
    assert describe(0) == "0"


@pytest.mark.parametrize("usage, field", [
    ({"prompt_tokens": -1}, "usage.prompt_tokens"),
    ({"prompt_tokens": "12"}, "usage.prompt_tokens"),
    ({"prompt_tokens": 12.0}, "usage.prompt_tokens"),
    ({"prompt_tokens": True}, "usage.prompt_tokens"),
    ({"prompt_tokens": 5, "prompt_tokens_details": {"cached_tokens": -3}},
     "usage.prompt_tokens_details.cached_tokens"),
    ({"prompt_tokens": 5, "prompt_cache_hit_tokens": "a lot"}, "usage.prompt_cache_hit_tokens"),
])
def test_malformed_values_raise_naming_the_field(usage, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        read_usage(usage)


def test_something_that_is_not_a_usage_is_refused():
    with pytest.raises(TypeError, match="not list"):
        read_usage([1, 2])
    with pytest.raises(TypeError, match="not type"):
        read_usage(Usage)


@given(prompt=counts, completion=counts, cached=counts, written=st.none() | counts)
def test_openai_shape_round_trips(prompt, completion, cached, written):
    details = {"cached_tokens": cached}
    if written is not None:
        details["cache_write_tokens"] = written
    usage = {"prompt_tokens": prompt, "completion_tokens": completion,
             "total_tokens": prompt + completion, "prompt_tokens_details": details}
    assert read_usage(usage) == Usage(prompt, completion, cached, written, "openai")
    assert read_usage(CompletionUsage.model_validate(usage)) == read_usage(usage)


@given(hit=counts, miss=counts, completion=counts, with_prompt=st.booleans())
def test_deepseek_shape_round_trips(hit, miss, completion, with_prompt):
    usage = {"completion_tokens": completion, "prompt_cache_hit_tokens": hit,
             "prompt_cache_miss_tokens": miss}
    if with_prompt:
        usage["prompt_tokens"] = hit + miss
    read = read_usage(usage)
    assert read == Usage(hit + miss, completion, hit, None, "deepseek")
    assert read.uncached == miss


@given(read=counts, created=counts, fresh=counts, completion=counts)
def test_anthropic_shape_round_trips(read, created, fresh, completion):
    usage = {"input_tokens": fresh, "output_tokens": completion,
             "cache_read_input_tokens": read, "cache_creation_input_tokens": created}
    assert read_usage(usage) == Usage(fresh + read + created, completion, read, created,
                                      "anthropic")


unknown_keys = st.text(min_size=1, max_size=12).filter(lambda k: "cache" not in k and k not in (
    "prompt_tokens", "completion_tokens", "output_tokens", "input_tokens",
    "prompt_tokens_details"))


@given(prompt=counts, completion=counts, extra=st.dictionaries(unknown_keys, counts, max_size=4))
def test_unknown_shapes_give_none_not_zero(prompt, completion, extra):
    """Whatever else a server adds, without a known cache field the cache is not reported."""
    usage = read_usage({"prompt_tokens": prompt, "completion_tokens": completion, **extra})
    assert (usage.prompt, usage.completion) == (prompt, completion)
    assert usage.cached is None and usage.cache_write is None
    assert usage.provider_shape == "plain"


@given(value=st.one_of(st.integers(max_value=-1), st.floats(), st.text(), st.booleans(),
                       st.lists(st.integers(), max_size=2)))
def test_any_malformed_count_raises_a_value_error_naming_it(value):
    with pytest.raises(ValueError, match=r"usage\.completion_tokens"):
        read_usage({"prompt_tokens": 1, "completion_tokens": value})


def test_the_teaching_model_usage_reads_as_openai(client):
    """The teaching model reports OpenAI's shape, and two identical long prompts hit the cache."""
    messages = [{"role": "system", "content": "rule " * 1200}, {"role": "user", "content": "hi"}]
    first = read_usage(client.chat.completions.create(model="m", messages=messages).usage)
    second = read_usage(client.chat.completions.create(model="m", messages=messages).usage)
    assert first.provider_shape == second.provider_shape == "openai"
    assert first.cached == 0 and second.cached > 0 and second.prompt == first.prompt


def test_total_sums_only_when_every_figure_was_reported():
    from course.usage import total

    assert total([3, 4, 0]) == 7
    assert total(iter([])) == 0
    assert total([3, None, 4]) is None  # a partial sum would pass for the whole


def test_responses_api_usage_reads_as_openai():
    # The Responses API names the fields input_tokens / input_tokens_details (chapter 14)
    from openai.types.responses import ResponseUsage
    usage = ResponseUsage.model_validate({
        "input_tokens": 1500, "output_tokens": 12, "total_tokens": 1512,
        "input_tokens_details": {"cached_tokens": 1280, "cache_write_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0}})
    read = read_usage(usage)
    assert read == Usage(1500, 12, 1280, 0, "openai", reasoning=0)
    assert read_usage({"input_tokens": 10, "output_tokens": 2}).prompt is None  # no details: not this shape


def test_reasoning_tokens_are_read_where_a_provider_reports_them():
    # OpenAI and DeepSeek's reasoner: completion_tokens_details; the Responses API: output_...
    openai_shape = {"prompt_tokens": 10, "completion_tokens": 90, "total_tokens": 100,
                    "prompt_tokens_details": {"cached_tokens": 0},
                    "completion_tokens_details": {"reasoning_tokens": 64}}
    deepseek = {"prompt_tokens": 10, "completion_tokens": 90, "prompt_cache_hit_tokens": 0,
                "prompt_cache_miss_tokens": 10, "completion_tokens_details": {"reasoning_tokens": 64}}
    responses = {"input_tokens": 10, "output_tokens": 90, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens_details": {"reasoning_tokens": 64}}
    for usage in (openai_shape, deepseek, responses):
        assert read_usage(usage).reasoning == 64
    assert read_usage({"prompt_tokens": 10, "completion_tokens": 5}).reasoning is None  # Ollama
    assert read_usage({"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0}).reasoning is None
    record = {"prompt_tokens": 10, "completion_tokens": 90, "cached_tokens": 0, "reasoning_tokens": 64}
    assert read_usage(record).reasoning == 64
    assert str(read_usage(openai_shape)) == str(Usage(10, 90, 0, None, "openai"))  # printed as before
    with pytest.raises(ValueError, match="reasoning_tokens"):
        read_usage({"prompt_tokens": 1, "completion_tokens_details": {"reasoning_tokens": -1}})
