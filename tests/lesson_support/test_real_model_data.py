"""The measured data chapter 16 prints (data/real_model/*.json): each file says where, when and
with what it was measured, and its summaries follow from its own raw rows. No figure's value
is asserted (they vary by machine); the arithmetic and the token facts are."""
from __future__ import annotations

import json

import pytest

from course.paths import DATA_DIR
from lesson_support.real_model import needle, prefix_cache

DATA = DATA_DIR / "real_model"


def load(name: str) -> dict:
    path = DATA / f"{name}.json"
    if not path.exists():
        pytest.skip(f"{path} is not measured yet: python -m lesson_support.real_model {name}")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["template", "stream", "cache", "needle", "attention", "probes"])
def test_every_file_says_where_when_and_with_what(name):
    stamp = load(name)["provenance"]
    assert stamp["measured_at"] and stamp["started_at"] <= stamp["measured_at"]
    assert stamp["machine"]["cpu"] and stamp["machine"]["cores"] >= 1
    assert len(stamp["machine"]["load_average_1_5_15"]) == 3
    assert stamp["model"]["file"].endswith(".gguf") and len(stamp["model"]["sha256"]) == 64
    assert stamp["libraries"]["llama-cpp-python"]


def test_template_overheads_are_prompt_less_contents():
    results = load("template")["results"]
    for row in results["counts"] + results["by_length"] + results["by_length_without_system"]:
        assert row["overhead_tokens"] == row["prompt_tokens"] - row["content_tokens"] > 0
    assert results["rendered"].endswith("<|im_start|>assistant\n")
    cost = {(r["content"], r["tokenizer"]): r["tokens_per_char"] for r in results["language_cost"]}
    assert {content for content, _ in cost} == {"english", "chinese"}


def test_stream_rows_are_ordered_and_complete():
    results = load("stream")["results"]
    assert results["rows"] and results["max_rss_mb"] > 0
    for row in results["rows"]:
        times = [t for t, _ in row["first_pieces"]]
        assert times == sorted(times) and times[0] == pytest.approx(row["ttft_s"], abs=1e-3)
        assert row["prefill_tokens_per_s"] == pytest.approx(row["prompt_tokens"] / row["ttft_s"])


def test_cache_summary_and_comparison_follow_from_the_rows():
    results = load("cache")["results"]
    rows = results["rows"]
    for row in rows:
        assert row["evaluated_tokens"] == row["prompt_tokens"] - row["cached_tokens"]
        if row["scenario"] in ("cold",):
            assert row["cached_tokens"] == 0
        if row["scenario"] == "again":
            assert row["evaluated_tokens"] == 1  # llama.cpp evaluates the last token again
        if row["scenario"] in ("end_change", "new_question"):
            assert row["evaluated_tokens"] < row["prompt_tokens"] / 4
        if row["scenario"] == "top_change":
            assert row["cached_tokens"] < row["prompt_tokens"] / 4
    assert prefix_cache.summarise(rows) == results["summary"]
    assert prefix_cache.comparison(results["summary"], results["teaching"]) == results["comparison"]
    eviction = results["eviction"]
    prompt = eviction["a_cold"]["prompt_tokens"]
    assert eviction["a_again"]["cached_tokens"] == eviction["a_restored"]["cached_tokens"] == prompt - 1
    assert eviction["a_after_eviction"]["cached_tokens"] < prompt / 4 and eviction["state_bytes"] > 0


def test_needle_cells_follow_from_independent_trials():
    results = load("needle")["results"]
    trials = results["trials"]
    assert needle.cells(trials) == results["cells"]
    assert needle.independence(trials) == results["independence"]
    assert results["independence"]["distinct_keys"] == len(trials)
    assert results["independence"]["max_cached_tokens"] < results["independence"]["min_prompt_tokens"] / 4
    for row in trials:
        assert row["success"] == (row["answer"] == row["key"])
        assert row["success"] == needle.score(row["reply"], row["key"], [])["success"]
    assert sum(c["n"] for c in results["cells"]) == len(trials)  # N per cell as measured


def test_probe_verdicts_follow_from_their_counts():
    from lesson_support.real_model.probes import PROBES, verdict
    from solutions.evaluation.stats import wilson

    results = load("probes")["results"]
    for side in ("teaching", "real"):
        rows = results[side]
        assert [r["probe"] for r in rows] == [p.name for p in PROBES]
        for row in rows:
            assert row["verdict"] == verdict(row)
            assert (row["follows_low"], row["follows_high"]) == pytest.approx(wilson(row["follows_rule"], row["trials"]))
            assert (row["control_low"], row["control_high"]) == pytest.approx(wilson(row["control_ok"], row["trials"]))
    assert {r["verdict"] for r in results["teaching"]} == {"agrees"}  # the rules agree with themselves
