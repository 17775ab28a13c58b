"""Chapter 16's attention: the numpy forward pass on SmolLM2's GGUF against llama.cpp, and the
stored figure's invariants (data/real_model/attention.json, tested without any extra)."""
from __future__ import annotations

import copy
import importlib.util
import os

import numpy as np
import pytest

from course.paths import DATA_DIR
from lesson_support.real_model.attention import rope, segment_shares, sink_share, softmax
from lesson_support.real_model.attention_figure import (check_figure, load_figure, refund_context,
                                                        sink_summary, tokenize_pieces)

FIGURE = DATA_DIR / "real_model" / "attention.json"


def test_rope_rotates_pairs_keeping_their_length_and_leaves_position_zero_alone():
    x = np.random.default_rng(0).normal(size=(5, 2, 8))
    turned = rope(x, 10_000.0)
    assert np.allclose(turned[0], x[0])
    pairs = lambda a: np.hypot(a[..., 0::2], a[..., 1::2])  # noqa: E731
    assert np.allclose(pairs(turned), pairs(x))
    # relative: the dot product of a query and a key depends on their distance only
    q, k = np.ones((6, 1, 8)), np.ones((6, 1, 8))
    rq, rk = rope(q, 100.0), rope(k, 100.0)
    assert np.isclose(rq[3, 0] @ rk[1, 0], rq[5, 0] @ rk[3, 0])


def test_shares_read_the_sink_and_segments_from_rows():
    rows = np.zeros((2, 3, 6))
    rows[..., 0] = 0.5
    rows[..., 4:6] = 0.25
    assert np.allclose(sink_share(rows), [0.5, 0.5])
    shares = segment_shares(rows, {"first": (0, 1), "start": (1, 4), "end": (4, 6)})
    assert shares == {"first": 0.0, "start": 0.0, "end": 1.0}  # of what the sink leaves
    with_sink = segment_shares(rows, {"first": (0, 1), "start": (1, 4), "end": (4, 6)}, skip_sink=False)
    assert with_sink == {"first": 0.5, "start": 0.0, "end": 0.5}
    assert np.allclose(softmax(np.array([[0.0, np.log(3.0)]])), [[0.25, 0.75]])


def test_the_contexts_differ_only_by_the_status_block():
    without, with_ = refund_context(False), refund_context(True)
    assert [n for n, _ in with_ if n not in dict(without)] == ["status_block"]
    ids, spans = tokenize_pieces(with_, lambda text: list(text))
    assert "".join(ids) == "".join(text for _, text in with_)
    assert spans["status_block"][1] == spans["end"][0]


@pytest.fixture(scope="module")
def figure():
    if not FIGURE.exists():
        pytest.skip(f"{FIGURE} is not measured yet: python -m lesson_support.real_model attention")
    return load_figure(FIGURE)


def test_the_stored_figure_holds_its_invariants(figure):
    assert check_figure(figure) == []
    sink = sink_summary(figure)
    for name in ("without_status", "with_status"):
        rows = np.asarray(figure[name]["last_row_by_layer"])
        assert np.isclose(sink[name]["max_layer"], rows[:, 0].max(), atol=1e-6)
    shares = figure["with_status"]["segment_shares"]
    assert set(shares) == set(figure["with_status"]["segments"])
    assert sum(shares.values()) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("damage", ["row_sum", "tiling", "sink", "causal", "shares"])
def test_check_figure_catches_a_damaged_figure(figure, damage):
    bad = copy.deepcopy(figure)
    part = bad["without_status"] if damage != "causal" else bad["sentence"]
    if damage == "row_sum":
        part["last_row_by_layer"][3][5] += 0.1
    elif damage == "tiling":
        part["segments"]["call_2"][0] += 1
    elif damage == "sink":
        part["sink_by_layer_head"][0][0] += 0.5
    elif damage == "shares":
        part["segment_shares"]["call_1"] += 0.05
    else:
        matrix = next(iter(part["full_by_layer"].values()))
        matrix[0][1] = 0.2
    assert check_figure(bad)


needs_extra = pytest.mark.skipif(
    not os.environ.get("COURSE_REQUIRE_LOCAL_MODEL") and (
        importlib.util.find_spec("gguf") is None or importlib.util.find_spec("llama_cpp") is None),
    reason="the local model's packages (llama_cpp, gguf: ./run.sh setup --local-model) are not "
           "installed")


@needs_extra
def test_the_numpy_forward_pass_reproduces_llama_cpp():
    from lesson_support.real_model.attention import GGUFModel, forward
    from course.local_model import LocalModelUnavailable
    from lesson_support.real_model.weights import load_engine

    try:
        model = load_engine(context=2048)
    except LocalModelUnavailable as exc:
        if os.environ.get("COURSE_REQUIRE_LOCAL_MODEL"):
            raise
        pytest.skip(str(exc))
    ids = model.tokenize("<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
                         "<|im_start|>assistant\nThe capital of France is")
    llm = model.llama
    llm.reset()
    llm.eval(ids)
    engine = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).copy()
    ours = forward(GGUFModel(llm.model_path), ids)
    assert int(np.argmax(ours["logits"])) == int(np.argmax(engine))
    assert np.corrcoef(ours["logits"], engine)[0, 1] > 0.99
    assert set(np.argsort(ours["logits"])[-5:]) == set(np.argsort(engine)[-5:])
    rows = ours["last_row"]
    assert rows.shape == (30, 9, len(ids)) and np.allclose(rows.sum(axis=-1), 1.0)


def test_the_figure_plots_its_three_panels(figure):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lesson_support.real_model.attention_figure import plot_figure

    bars, sink, matrix = plot_figure(figure)
    assert len(bars.patches) == 2 * len(figure["with_status"]["segments"])
    assert len(sink.lines) == 2 and matrix.images
    plt.close("all")
