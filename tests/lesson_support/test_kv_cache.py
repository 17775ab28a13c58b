"""The numpy attention layer and KV cache of Chapter 05 (lesson_support/kv_cache.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_support import kv_cache as kv

MODEL = kv.TinyModel()
WORDS = ("a", "b", "c", "build", "green", "?", "<s>", "北京")
sequences = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12)


def test_the_worked_example_gives_the_textbooks_weights():
    example = kv.worked_example()
    last = example["weights"][-1]
    assert {t: round(float(w), 2) for t, w in zip(example["tokens"], last)} == kv.TEXTBOOK_WEIGHTS
    assert np.allclose(example["weights"].sum(axis=1), 1.0)
    assert np.all(np.triu(example["weights"], k=1) == 0), "a word attended to a later word"
    # the output is the weighted sum of the values: mostly the weather feature
    weather = kv.FEATURES.index("weather")
    assert int(np.argmax(example["outputs"][-1])) == weather


def test_the_sink_takes_most_of_the_weight_only_when_it_is_there():
    demo = kv.sink_demo()
    with_sink = kv.first_token_share(demo["sink_weights"])
    without = kv.first_token_share(demo["plain_weights"])
    assert with_sink.mean() > 0.7 and without.mean() < 0.2
    assert np.all(with_sink > without)
    # its value is zero, so weight on it shrinks what a query takes in from the others
    assert np.all(np.linalg.norm(demo["sink_outputs"][1:], axis=1)
                  < np.linalg.norm(demo["plain_outputs"][1:], axis=1))


def test_the_model_is_the_same_on_every_machine():
    """Seeded from fixed numbers and hashes: lesson outputs depend on these values."""
    assert np.round(MODEL.embed("a", 0)[:3], 6).tolist() == [-0.256457, -0.091914, -0.030466]
    assert np.round(MODEL.layers[0].w_q[0, :2], 6).tolist() == [0.031433, -0.033026]
    assert np.array_equal(kv.TinyModel().embed("x", 3), MODEL.embed("x", 3))
    assert not np.array_equal(MODEL.embed("x", 3), MODEL.embed("x", 4)), "position is ignored"


@settings(max_examples=60)
@given(sequences, st.sampled_from(WORDS))
def test_decoding_with_the_cache_equals_recomputing_everything(prompt, token):
    cached = kv.decode(MODEL, kv.prefill(MODEL, prompt).cache, token)
    full = kv.prefill(MODEL, prompt + [token])
    assert np.allclose(cached.outputs[-1], full.outputs[-1], atol=1e-9)
    for a, b in zip(cached.cache.keys + cached.cache.values, full.cache.keys + full.cache.values):
        assert np.allclose(a, b, atol=1e-9)
    for a, b in zip(cached.last_weights, full.last_weights):
        assert np.allclose(a, b, atol=1e-9) and a.shape == (len(prompt) + 1,)


@settings(max_examples=60)
@given(sequences, st.data())
def test_an_edit_at_position_p_keeps_exactly_p_rows(tokens, data):
    p = data.draw(st.integers(0, len(tokens) - 1))
    replacement = data.draw(st.sampled_from([w for w in WORDS if w != tokens[p]]))
    edited = tokens[:p] + [replacement] + tokens[p + 1:]
    plan = kv.reuse_plan(tokens, edited)
    assert (plan.kept, plan.recompute) == (p, len(tokens) - p)
    assert list(plan.kept_rows) == list(range(p))
    assert list(plan.recompute_rows) == list(range(p, len(tokens)))
    work = kv.Work()
    resumed = kv.resume(MODEL, kv.prefill(MODEL, tokens).cache, edited, work)
    assert work.kv_rows == MODEL.n_layers * (len(tokens) - p)
    full = kv.prefill(MODEL, edited)
    assert np.allclose(resumed.outputs[-1], full.outputs[-1], atol=1e-9)
    for a, b in zip(resumed.cache.keys, full.cache.keys):
        assert np.allclose(a, b, atol=1e-9)


def test_an_edit_changes_one_row_in_layer_one_and_every_later_row_above():
    tokens = "<s> You are a build agent . Is it green ?".split()
    edited = tokens[:3] + ["an"] + tokens[4:]
    layer1, layer2 = kv.changed_rows(MODEL, tokens, edited)
    assert layer1 == [3]
    assert layer2 == list(range(3, len(tokens)))
    assert kv.changed_rows(MODEL, tokens, tokens) == [[], []]
    with pytest.raises(ValueError, match="same length"):
        kv.changed_rows(MODEL, tokens, tokens[:-1])


def test_resume_of_an_unchanged_or_longer_prompt():
    tokens = ["a", "b", "c"]
    cache = kv.prefill(MODEL, tokens).cache
    work = kv.Work()
    same = kv.resume(MODEL, cache, tokens, work)  # re-reads only the last token
    assert work.kv_rows == MODEL.n_layers and len(same.cache) == 3
    work = kv.Work()
    longer = kv.resume(MODEL, cache, tokens + ["d", "e"], work)
    assert work.kv_rows == 2 * MODEL.n_layers
    assert np.allclose(longer.outputs[-1], kv.prefill(MODEL, tokens + ["d", "e"]).outputs[-1])


def test_prefill_work_is_counted_and_grows_with_the_square_of_the_length():
    for n in (1, 5, 16):
        counted = kv.Work()
        kv.prefill(MODEL, ["a"] * n, counted)
        assert counted == kv.prefill_work(MODEL, n)
        assert counted.kv_rows == MODEL.n_layers * n
        assert counted.scores == MODEL.n_layers * n * (n + 1) // 2
    small, large = kv.prefill_work(MODEL, 4000), kv.prefill_work(MODEL, 8000)
    assert large.kv_rows / small.kv_rows == 2
    assert 3.99 < large.scores / small.scores < 4.01
    assert 3.9 < large.flops / small.flops < 4.0


def test_decoding_steps_count_like_the_textbook():
    # with a cache a step computes one K/V row per layer and compares with every cached row
    work = kv.Work()
    kv.decode(MODEL, kv.prefill(MODEL, ["a"] * 4).cache, "e", work)
    assert (work.kv_rows, work.scores) == (MODEL.n_layers, MODEL.n_layers * 5)
    # without a cache, writing the 5th, 6th, ... token recomputes 5, 6, ... rows
    no_cache = kv.generation_work(MODEL, 4, 3, cached=False)
    with_cache = kv.generation_work(MODEL, 4, 3, cached=True)
    assert no_cache.kv_rows == MODEL.n_layers * (4 + 5 + 6 + 7)
    assert with_cache.kv_rows == MODEL.n_layers * (4 + 3)
    assert with_cache.scores == MODEL.n_layers * (10 + 5 + 6 + 7)


def test_small_pieces():
    assert kv.common_prefix_length("abcd", "abxd") == 2
    assert kv.common_prefix_length([], ["a"]) == 0
    assert kv.common_prefix_length(["a", "b"], ["a", "b", "c"]) == 2
    assert np.allclose(kv.softmax(np.array([0.0, -np.inf])), [1.0, 0.0])
    with pytest.raises(ValueError, match="at least one token"):
        kv.extend(MODEL, kv.empty_cache(MODEL), [])
    assert len(kv.prefill(MODEL, ["a", "b"]).cache.truncated(1)) == 1
