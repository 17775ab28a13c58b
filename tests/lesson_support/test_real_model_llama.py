"""Chapter 16's measuring library on the real SmolLM2 (llama_cpp): token facts, never seconds.

Skipped, saying why, where the local model is not installed (`./run.sh setup --local-model`);
`./run.sh test` and CI install it and set COURSE_REQUIRE_LOCAL_MODEL, and then its absence is an
error. Times are only checked for their structure (present, ordered, non-negative).
"""
from __future__ import annotations

import os

import pytest

from lesson_support.real_model import needle, prefix_cache, template
from lesson_support.real_model.engine import LlamaEngine
from lesson_support.real_model.stream import stream_summary, timed_stream
from lesson_support.real_model.weights import load_engine
from course.local_model import LocalModelUnavailable

try:
    MODEL = load_engine(context=2048)
except LocalModelUnavailable as exc:
    if os.environ.get("COURSE_REQUIRE_LOCAL_MODEL"):
        raise
    pytest.skip(f"the local model is not installed here ({exc})", allow_module_level=True)

COUNT = template.model_counter(MODEL)


@pytest.fixture()
def engine():
    engine = LlamaEngine(MODEL)
    engine.reset()
    return engine


def test_the_template_from_the_gguf_renders_chatml_and_inserts_its_own_system_prompt():
    render = MODEL.render
    prompt = render(list(template.SAMPLE_MESSAGES))
    assert prompt.startswith("<|im_start|>system\nYou are a support agent")
    assert prompt.endswith("<|im_start|>assistant\n") and prompt.count("<|im_end|>") == 4
    bare = render([{"role": "user", "content": "Hi"}])
    assert "SmolLM" in bare  # a system prompt nobody wrote, from the template itself
    assert COUNT("<|im_start|>") == 1 and template.o200k_counter("<|im_start|>") > 1


def test_the_envelope_costs_tokens_per_message_and_chinese_costs_more_on_smollm2():
    rows = template.overhead_by_length(lambda m: MODEL.render(list(m)), COUNT)
    assert all(r["overhead_tokens"] > 0 for r in rows)
    assert rows[-1]["overhead_tokens"] > rows[0]["overhead_tokens"]
    cost = {(r["content"], r["tokenizer"]): r["tokens_per_char"] for r in template.language_cost(
        {"smollm2": COUNT, "o200k": template.o200k_counter})}
    assert cost[("chinese", "smollm2")] > cost[("chinese", "o200k")]
    assert cost[("chinese", "smollm2")] / cost[("english", "smollm2")] > \
        cost[("chinese", "o200k")] / cost[("english", "o200k")]


def test_the_prefix_llama_cpp_reuses_is_the_one_predicted(engine):
    for scenario, messages in prefix_cache.round_requests(2, 80, COUNT):
        *_, last = engine(messages, max_tokens=2)
        usage = last["usage"]
        assert usage["prompt_tokens_details"]["cached_tokens"] == usage["predicted_cached_tokens"], scenario


def test_the_engine_reports_the_prefix_llama_cpp_reuses(engine):
    requests = dict(prefix_cache.round_requests(1, 120, COUNT))
    cold = prefix_cache.measure_request(engine, requests["cold"])
    again = prefix_cache.measure_request(engine, requests["again"])
    end = prefix_cache.measure_request(engine, requests["end_change"])
    top = prefix_cache.measure_request(engine, requests["top_change"])
    assert cold["cached_tokens"] == 0 and cold["evaluated_tokens"] == cold["prompt_tokens"]
    assert again["cached_tokens"] == again["prompt_tokens"] - 1  # the last token is evaluated again
    tail = COUNT("15<|im_end|>\n<|im_start|>user\n" + prefix_cache.QUESTIONS[0] +
                 "<|im_end|>\n<|im_start|>assistant\n")
    assert end["evaluated_tokens"] <= tail + 2
    assert top["cached_tokens"] <= COUNT("<|im_start|>system\nCurrent time: 2026-12-06 09:0")  # digit by digit
    for row in (cold, again, end, top):
        assert row["ttft_s"] is not None and row["ttft_s"] >= 0


def test_eviction_loses_the_prefix_and_restoring_the_state_brings_it_back(engine):
    result = prefix_cache.eviction_and_restore(engine, COUNT, 100, seed=3)
    prompt = result["a_cold"]["prompt_tokens"]
    assert result["a_again"]["cached_tokens"] == prompt - 1
    header = COUNT("<|im_start|>system\nCurrent time: 2026-12-06 09:00:0")  # A and B differ after it
    assert result["a_after_eviction"]["cached_tokens"] <= header < prompt / 4
    assert result["a_restored"]["cached_tokens"] == prompt - 1
    assert result["state_bytes"] > 0 and result["save_s"] >= 0 and result["restore_s"] >= 0


def test_the_raw_stream_arrives_piece_by_piece_in_order(engine):
    messages = [{"role": "user", "content": "Count from one to ten in words."}]
    record = timed_stream(lambda: engine(messages, max_tokens=12))
    times = [t for t, _ in record["pieces"]]
    assert len(times) >= 2 and times == sorted(times) and times[0] >= 0
    assert record["usage"]["completion_tokens"] == len(record["pieces"])  # one token a chunk
    summary = stream_summary(record)
    assert summary["ttft_s"] == times[0] and summary["decode_pieces_per_s"] > 0


def test_a_needle_trial_reports_its_answer_and_shares_only_the_header(engine):
    first = needle.run_trial(engine, 11, 150, 0.5, 2, COUNT)
    second = needle.run_trial(engine, 12, 150, 0.5, 2, COUNT)
    for row in (first, second):
        assert set(row) >= {"answer", "success", "took_decoy", "prompt_tokens", "cached_tokens", "reply"}
        assert row["prompt_tokens"] > 150
    header = COUNT(MODEL.render([{"role": "system", "content": needle.INSTRUCTION}]))
    assert second["cached_tokens"] <= header + COUNT("<|im_start|>user\nDocument:\nLog book ")
