"""The stored attention figure: experiment 2-7's two contexts (with and without a status block at
the end) and experiment 2-2's short sentence, run through `attention.forward` and kept as data.

Each context is a list of (segment name, text) pieces in the model's chat format; the pieces are
tokenized one by one and concatenated, so every segment's token span is exact (a seam may
tokenize differently from the whole text; the pieces end at line breaks and special tokens,
where SmolLM2's tokenizer splits anyway).

The figure keeps, per context, the last token's attention averaged over heads for every layer
(layers x tokens), the share of each head on token 0 (the sink), and the tokens. `check_figure`
states the invariants the lesson relies on; the tests run it on the stored file.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from lesson_support.real_model.attention import GGUFModel, forward, segment_shares

STATUS_BLOCK = ("<agent_status>\nCurrent state:\n- tool calls: phone_call called 3 times (Xfinity: 3)\n"
                "- constraint check: maximum calls to Xfinity reached (3/3)\n</agent_status>")


def _turn(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def refund_context(with_status: bool) -> list[tuple[str, str]]:
    """Experiment 2-7: an agent has called Xfinity three times, with web searches between; the
    user asks it to call again. B appends the status block to the user's last message."""
    pieces = [
        ("system", _turn("system", "You are a customer-service agent. Call a company at most "
                                   "3 times per case.")),
        ("request", _turn("user", "Xfinity charged me twice this month. Please get me a refund.")),
        ("call_1", _turn("assistant", 'phone_call(company="Xfinity")')
         + _turn("tool", "Call 1 with Xfinity: the agent needs a ticket number first.")),
        ("search_1", _turn("assistant", 'web_search(query="Xfinity double charge refund")')
         + _turn("tool", "Xfinity help: billing disputes are answered within 30 days.")),
        ("call_2", _turn("assistant", 'phone_call(company="Xfinity")')
         + _turn("tool", "Call 2 with Xfinity: on hold for 40 minutes, then cut off.")),
        ("search_2", _turn("assistant", 'web_search(query="Xfinity billing phone hours")')
         + _turn("tool", "Xfinity billing lines are open 8am to 9pm.")),
        ("call_3", _turn("assistant", 'phone_call(company="Xfinity")')
         + _turn("tool", "Call 3 with Xfinity: ticket 88-1942 opened; refund in 5 to 7 days.")),
    ]
    question = "Can you call them again to follow up?"
    if with_status:
        pieces += [("question", f"<|im_start|>user\n{question}\n"),
                   ("status_block", STATUS_BLOCK),
                   ("end", "<|im_end|>\n<|im_start|>assistant\n")]
    else:
        pieces += [("question", f"<|im_start|>user\n{question}"),
                   ("end", "<|im_end|>\n<|im_start|>assistant\n")]
    return pieces


SENTENCE = [("sentence", "How is the weather in Beijing today?")]


def tokenize_pieces(pieces: Sequence[tuple[str, str]], tokenize: Callable[[str], list[int]]):
    """(ids, {segment: (start, end)}) with each piece tokenized on its own."""
    ids, spans = [], {}
    for name, text in pieces:
        piece = tokenize(text)
        spans[name] = (len(ids), len(ids) + len(piece))
        ids += piece
    return ids, spans


def measure(model: GGUFModel, pieces, tokenize: Callable[[str], list[int]],
            detokenize: Callable[[int], str], keep_full: Sequence[int] = ()) -> dict:
    ids, spans = tokenize_pieces(pieces, tokenize)
    out = forward(model, ids, keep_full=keep_full)
    rows = out["last_row"]
    result = {"tokens": [detokenize(i) for i in ids], "segments": {k: list(v) for k, v in spans.items()},
              "last_row_by_layer": np.round(rows.mean(axis=1), 6).tolist(),
              "sink_by_layer_head": np.round(rows[..., 0], 6).tolist(),
              "segment_shares": segment_shares(rows, spans),
              "next_token": detokenize(int(np.argmax(out["logits"])))}
    for layer, weights in out["full"].items():
        result.setdefault("full_by_layer", {})[str(layer)] = np.round(weights.mean(axis=0), 6).tolist()
    return result


def build_figure(model_path: str, tokenize: Callable[[str], list[int]],
                 detokenize: Callable[[int], str]) -> dict:
    model = GGUFModel(model_path)
    layers = model.shape.layers
    return {"model_shape": model.shape.__dict__,
            "without_status": measure(model, refund_context(False), tokenize, detokenize),
            "with_status": measure(model, refund_context(True), tokenize, detokenize),
            "sentence": measure(model, SENTENCE, tokenize, detokenize,
                                keep_full=(0, layers // 2, layers - 1))}


def load_figure(path: str | Path) -> dict:
    """The figure stored by `python -m lesson_support.real_model attention` (its "results")."""
    return json.loads(Path(path).read_text(encoding="utf-8"))["results"]


def check_figure(figure: dict, tolerance: float = 1e-4) -> list[str]:
    """The invariants of a stored figure, as a list of problems (empty when it holds): every
    attention row sums to 1 and is non-negative; a causal matrix has nothing above its diagonal;
    segments tile the tokens; the stored shares follow from the stored rows."""
    problems = []
    for name in ("without_status", "with_status", "sentence"):
        part = figure[name]
        rows = np.asarray(part["last_row_by_layer"])
        n = len(part["tokens"])
        if rows.shape != (figure["model_shape"]["layers"], n):
            problems.append(f"{name}: rows shaped {rows.shape}, expected (layers, {n})")
            continue
        if (rows < 0).any() or np.abs(rows.sum(axis=1) - 1).max() > tolerance:
            problems.append(f"{name}: a layer's attention row does not sum to 1")
        spans = sorted(part["segments"].values())
        if spans[0][0] != 0 or spans[-1][1] != n or any(a[1] != b[0] for a, b in zip(spans, spans[1:])):
            problems.append(f"{name}: segments do not tile the {n} tokens")
        sink = np.asarray(part["sink_by_layer_head"]).mean(axis=1)
        if np.abs(sink - rows[:, 0]).max() > tolerance:
            problems.append(f"{name}: the sink shares do not match the rows' token 0")
        spans = {k: tuple(v) for k, v in part["segments"].items()}
        shares = segment_shares(rows, spans)
        if any(abs(shares[k] - part["segment_shares"][k]) > 1e-3 for k in shares):
            problems.append(f"{name}: the segment shares do not follow from the rows")
        for layer, matrix in part.get("full_by_layer", {}).items():
            m = np.asarray(matrix)
            if np.abs(np.triu(m, k=1)).max() > 0 or np.abs(m.sum(axis=1) - 1).max() > tolerance:
                problems.append(f"{name}: layer {layer}'s matrix is not causal with rows summing to 1")
    return problems


def sink_summary(figure: dict) -> dict:
    """Token 0's share of the last token's attention: median over layers, the largest layer's,
    and the fraction of (layer, head) pairs that give it more than 70% (the textbook's figure)."""
    out = {}
    for name in ("without_status", "with_status"):
        heads = np.asarray(figure[name]["sink_by_layer_head"])
        by_layer = heads.mean(axis=1)
        out[name] = {"median_layer": float(np.median(by_layer)), "max_layer": float(by_layer.max()),
                     "heads_over_70pct": float((heads > 0.7).mean())}
    return out


def plot_figure(figure: dict, layer: str | None = None, axes=None):
    """Three panels: the last token's attention by segment with and without the status block
    (sink left out); token 0's share per layer (the sink); the short sentence's causal matrix at
    one stored layer (default: the middle one)."""
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(1, 3, figsize=(15, 3.8))
    bars, sink, matrix = axes
    names = list(figure["with_status"]["segments"])
    for offset, part in ((-0.2, "without_status"), (0.2, "with_status")):
        shares = figure[part]["segment_shares"]
        bars.bar([i + offset for i in range(len(names))], [shares.get(n, 0.0) for n in names], 0.4,
                 label=part.replace("_", " "))
    bars.set_xticks(range(len(names)), names, rotation=45, ha="right")
    bars.set_ylabel("share of the last token's attention\n(token 0 left out)")
    bars.legend()
    for part in ("without_status", "with_status"):
        sink.plot([row[0] for row in figure[part]["last_row_by_layer"]], label=part.replace("_", " "))
    sink.set_xlabel("layer")
    sink.set_ylabel("attention on token 0 (sink)")
    sink.set_ylim(0, 1)
    sink.legend()
    stored = figure["sentence"]["full_by_layer"]
    layer = layer or sorted(stored, key=int)[len(stored) // 2]
    tokens = figure["sentence"]["tokens"]
    matrix.imshow(np.asarray(stored[layer]), cmap="Blues", vmin=0, vmax=1)
    matrix.set_xticks(range(len(tokens)), tokens, rotation=90)
    matrix.set_yticks(range(len(tokens)), tokens)
    matrix.set_title(f"layer {layer}, mean over heads")
    return axes
