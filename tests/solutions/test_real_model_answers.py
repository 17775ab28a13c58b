"""Chapter 16's answers: ttft_and_decode reads the teaching model's simulated timing exactly and
SmolLM2's recorded streams and cache rounds as the lesson does; needle_cells keeps every trial,
scores each cell with chapter 12's Wilson interval and refuses a trial counted twice; and
template_overhead reproduces the recorded envelope under both tokenizers. Hypothesis states the
invariants (any piece times, any trials, any template whose envelope is known)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course.llm
from course.llm.timing import DECODE_TOKENS_PER_S
from course.tokenizer import count_tokens
from lesson_support.real_model import needle, template
from solutions.evaluation.stats import wilson
from solutions.real_model import (CACHED_SHARE, SAMPLE_MESSAGES, needle_cells, recorded,
                                  render_template, template_overhead, timed_teaching_stream,
                                  ttft_and_decode)

TEMPLATE = recorded("template")
RULES = "\n".join(f"Rule {i}: a refund over {10 * i} dollars needs form R-{i}." for i in range(1, 121))
ASK = [{"role": "system", "content": RULES}, {"role": "user", "content": "What do I need for a refund?"}]


def smollm2_render(messages):
    return render_template(TEMPLATE["template"], messages)


# --- ttft_and_decode ---------------------------------------------------------------------------

def test_cold_and_cached_on_the_teaching_models_timing():
    with course.llm.serve() as server:
        records = [timed_teaching_stream(server.client().chat.completions.create(
            model=course.llm.MODEL_NAME, messages=ASK, stream=True, stream_options={"include_usage": True}))
            for _ in range(2)]
    cold, again = (ttft_and_decode(r) for r in records)
    for got, record in zip((cold, again), records):
        assert got["ttft_s"] == record["teaching_timing"]["time_to_first_token_s"]
        assert got["decode_tokens_per_s"] == pytest.approx(DECODE_TOKENS_PER_S)
        assert got["prompt_tokens"] == record["usage"]["prompt_tokens"]
    assert (cold["cached_tokens"], cold["cached"]) == (0, False)
    assert again["cached"] is True and again["cached_tokens"] >= CACHED_SHARE * again["prompt_tokens"]
    assert again["ttft_s"] < cold["ttft_s"]


def test_smollm2s_recorded_cache_rounds_read_as_the_lesson_tells_them():
    """Cold and a change at the top miss (only the template's header is reused); the same
    request, a new question and a change at the end hit."""
    hit = {"cold": False, "again": True, "new_question": True, "end_change": True, "top_change": False}
    for row in recorded("cache")["rows"]:
        usage = {"prompt_tokens": row["prompt_tokens"],
                 "prompt_tokens_details": {"cached_tokens": row["cached_tokens"]}}
        got = ttft_and_decode({"pieces": [[row["ttft_s"], "x"]], "usage": usage})
        assert got["cached"] is hit[row["scenario"]], row
        assert (got["ttft_s"], got["decode_tokens_per_s"]) == (row["ttft_s"], None)


def test_smollm2s_recorded_streams_give_their_recorded_ttft():
    for row in recorded("stream")["rows"]:
        got = ttft_and_decode({"pieces": row["first_pieces"], "usage": None})
        assert got["ttft_s"] == pytest.approx(row["ttft_s"], abs=1e-4)
        assert got["decode_tokens_per_s"] > 0
        assert (got["prompt_tokens"], got["cached_tokens"], got["cached"]) == (None, None, None)


def test_too_few_pieces_give_none_not_an_error():
    assert ttft_and_decode({"pieces": [], "usage": None})["ttft_s"] is None
    assert ttft_and_decode({"pieces": [[0.1, ""], [0.2, ""]]})["decode_tokens_per_s"] is None
    one = ttft_and_decode({"pieces": [[0.4, "Hi"]], "usage": {"prompt_tokens": 9}})
    assert (one["ttft_s"], one["decode_tokens_per_s"], one["cached"]) == (0.4, None, None)
    same_time = ttft_and_decode({"pieces": [[0.4, "a"], [0.4, "b"]]})
    assert same_time["decode_tokens_per_s"] is None  # no time passed: no rate


@settings(max_examples=200, deadline=None)
@given(gaps=st.lists(st.floats(0.001, 5), min_size=1, max_size=40),
       start=st.floats(0, 100), empty=st.lists(st.integers(0, 40), max_size=5),
       prompt=st.integers(1, 10_000), share=st.floats(0, 1))
def test_ttft_is_the_first_text_and_decode_the_rest(gaps, start, empty, prompt, share):
    times = [start]
    for gap in gaps[1:]:
        times.append(times[-1] + gap)
    pieces = [[t, "tok"] for t in times]
    for i in sorted(empty, reverse=True):  # pieces without text, anywhere: they do not count
        at = min(i, len(pieces))
        pieces.insert(at, [pieces[at - 1][0] if at else 0.0, ""])
    cached = round(share * prompt)
    got = ttft_and_decode({"pieces": pieces, "usage": {"prompt_tokens": prompt,
                                                       "prompt_tokens_details": {"cached_tokens": cached}}})
    assert got["ttft_s"] == times[0]
    if len(times) > 1:
        assert got["decode_tokens_per_s"] == pytest.approx((len(times) - 1) / (times[-1] - times[0]))
    else:
        assert got["decode_tokens_per_s"] is None
    assert got["cached"] is (cached >= CACHED_SHARE * prompt)


# --- needle_cells ------------------------------------------------------------------------------

def test_the_recorded_grid_gives_its_recorded_cells():
    results = recorded("needle")
    assert needle_cells(results["trials"]) == results["cells"]


def test_the_lessons_library_scores_with_the_answer_not_a_copy():
    assert needle.cells is needle_cells and template.envelope_overhead is template_overhead
    assert template.SAMPLE_MESSAGES is SAMPLE_MESSAGES


def test_a_trial_counted_twice_is_refused():
    trials = recorded("needle")["trials"]
    with pytest.raises(ValueError, match="appears twice"):
        needle_cells(trials + [dict(trials[3])])
    assert needle_cells([]) == []


trial = st.fixed_dictionaries({
    "length": st.sampled_from([250, 1000, 4000]), "depth": st.sampled_from([0.0, 0.5, 1.0]),
    "distractors": st.sampled_from([0, 2]), "success": st.booleans(), "took_decoy": st.booleans()})


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(trial, max_size=60), level=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
       order=st.randoms(use_true_random=False))
def test_cells_keep_every_trial_and_bracket_the_rate(rows, level, order):
    trials = [{**row, "seed": i} for i, row in enumerate(rows)]
    shuffled = list(trials)
    order.shuffle(shuffled)
    cells = needle_cells(shuffled, level)
    assert cells == needle_cells(trials, level)  # the order of the trials does not matter
    keys = [(c["distractors"], c["length"], c["depth"]) for c in cells]
    assert keys == sorted(set(keys)) and sum(c["n"] for c in cells) == len(trials)
    for c in cells:
        mine = [t for t in trials if (t["distractors"], t["length"], t["depth"]) == keys[cells.index(c)]]
        assert c["successes"] == sum(t["success"] for t in mine)
        assert c["took_decoy"] == sum(t["took_decoy"] for t in mine)
        assert (c["low"], c["high"]) == wilson(c["successes"], c["n"], level)
        assert 0 <= c["low"] <= c["rate"] <= c["high"] <= 1


# --- template_overhead -------------------------------------------------------------------------

def test_the_recorded_envelope_under_o200k_base():
    assert smollm2_render(SAMPLE_MESSAGES) == TEMPLATE["rendered"]
    assert smollm2_render(SAMPLE_MESSAGES[1:2]) == TEMPLATE["rendered_without_system"]
    row = next(r for r in TEMPLATE["counts"] if r["tokenizer"].startswith("o200k_base"))
    got = template_overhead(SAMPLE_MESSAGES, smollm2_render, count_tokens)
    assert {k: got[k] for k in row if k != "tokenizer"} == {k: v for k, v in row.items() if k != "tokenizer"}
    assert got["prompt"] == TEMPLATE["rendered"]


def test_the_recorded_envelope_under_smollm2s_own_tokenizer():
    """SmolLM2's counts looked up from the recorded rows (the model is not loaded): every prefix
    of the conversation, with and without a system message (the template then adds its own)."""
    table = {}
    for rows, messages in ((TEMPLATE["by_length"], SAMPLE_MESSAGES),
                           (TEMPLATE["by_length_without_system"], SAMPLE_MESSAGES[1:])):
        before = 0
        for n, row in enumerate(rows, 1):
            table[smollm2_render(messages[:n])] = row["prompt_tokens"]
            content = row["content_tokens"] - before
            assert table.setdefault(messages[n - 1]["content"], content) == content  # rows agree
            before = row["content_tokens"]
    for rows, messages in ((TEMPLATE["by_length"], SAMPLE_MESSAGES),
                           (TEMPLATE["by_length_without_system"], SAMPLE_MESSAGES[1:])):
        for n, row in enumerate(rows, 1):
            got = template_overhead(messages[:n], smollm2_render, table.__getitem__)
            assert {k: got[k] for k in row} == row
    # the default system message the template adds costs more than a short one of one's own
    assert TEMPLATE["by_length_without_system"][0]["overhead_tokens"] > TEMPLATE["by_length"][0]["overhead_tokens"]


def test_an_empty_conversation_is_refused():
    with pytest.raises(ValueError):
        template_overhead([], smollm2_render, count_tokens)


words = st.text(alphabet="abcdefgh ", max_size=30)


@settings(max_examples=150, deadline=None)
@given(contents=st.lists(words, min_size=1, max_size=8), per_message=st.integers(0, 5),
       fixed=st.integers(0, 5))
def test_a_known_envelope_is_measured_exactly(contents, per_message, fixed):
    """A template that writes `fixed` marker words once and `per_message` around each message,
    counted in words: the overhead is exactly fixed + per_message * n."""
    messages = [{"role": "user", "content": c} for c in contents]

    def render(ms):
        head = " ".join(["@"] * fixed)
        return head + "".join(f" {' '.join(['#'] * per_message)} {m['content']} " for m in ms)

    got = template_overhead(messages, render, lambda text: len(text.split()))
    assert got["overhead_tokens"] == fixed + per_message * len(messages)
    assert got["prompt_tokens"] == got["content_tokens"] + got["overhead_tokens"]
    assert got["overhead_per_message"] == pytest.approx(got["overhead_tokens"] / len(messages))


# --- the givens --------------------------------------------------------------------------------

def test_a_stream_without_teaching_timing_is_refused():
    chunk = {"choices": [{"index": 0, "delta": {"content": "hi"}}]}
    with pytest.raises(ValueError, match="teaching_timing"):
        timed_teaching_stream([chunk])


def test_a_missing_data_file_says_how_to_measure_it(monkeypatch, tmp_path):
    import course.givens.real_model as givens

    monkeypatch.setattr(givens, "RECORDED", tmp_path)
    with pytest.raises(FileNotFoundError, match="python -m lesson_support.real_model needle"):
        givens.recorded("needle")
