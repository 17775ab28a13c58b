"""Experiments 2-2 and 2-7 on the same weights the chapter serves: where attention goes.

llama.cpp does not expose attention weights, and the usual way to get them (transformers with
`output_attentions`) needs PyTorch, hundreds of megabytes the course does not install. SmolLM2 is
small enough to run in numpy instead: `forward` reads the GGUF file with the `gguf` package
(llama.cpp's own reader, which also dequantizes Q4_1 and Q8_0) and computes the Llama forward
pass layer by layer, keeping the attention of every head. It is checked against llama.cpp: the
same tokens give the same next token and logits that agree closely (tests/lesson_support/
test_real_model_attention.py), so the attention it shows is that of the model the chapter
measures, not a look-alike.

This is the chapter's optional extra (`pip install gguf`): `python -m lesson_support.real_model
attention` recomputes `data/real_model/attention.json`, and the lesson reads that stored figure,
whose invariants (rows sum to 1, the sink share recomputed from the stored rows) are tested
without the extra.

Layout of the GGUF tensors (llama.cpp's converter): a matrix stored as [in, out] reads in numpy
as (out, in), so y = x @ W.T; Q and K are permuted so that llama.cpp's rotary embedding, which
rotates adjacent pairs (2i, 2i+1), equals the original model's; so `rope` rotates pairs too.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Shape:
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    rope_base: float
    eps: float


def _field(reader, name: str):
    return reader.fields[name].contents()


class GGUFModel:
    """A Llama-architecture GGUF file read lazily: each layer's weights are dequantized when the
    forward pass reaches it, so memory stays near one layer's float32 weights."""

    def __init__(self, path: str):
        from gguf import GGUFReader  # the chapter's optional extra

        self.reader = GGUFReader(path)
        arch = _field(self.reader, "general.architecture")
        if arch != "llama":
            raise ValueError(f"{path}: the numpy forward pass knows the llama architecture, not {arch!r}")
        heads = int(_field(self.reader, "llama.attention.head_count"))
        width = int(_field(self.reader, "llama.embedding_length"))
        self.shape = Shape(layers=int(_field(self.reader, "llama.block_count")), heads=heads,
                           kv_heads=int(_field(self.reader, "llama.attention.head_count_kv")),
                           head_dim=width // heads,
                           rope_base=float(_field(self.reader, "llama.rope.freq_base")),
                           eps=float(_field(self.reader, "llama.attention.layer_norm_rms_epsilon")))
        self.tensors = {t.name: t for t in self.reader.tensors}

    def weight(self, name: str) -> np.ndarray:
        from gguf.quants import dequantize

        tensor = self.tensors[name]
        return np.asarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32)


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rope(x: np.ndarray, base: float) -> np.ndarray:
    """Rotary position embedding on (tokens, heads, dim), rotating adjacent pairs."""
    tokens, _, dim = x.shape
    inv = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    angles = np.outer(np.arange(tokens), inv)                     # (tokens, dim/2)
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def softmax(scores: np.ndarray) -> np.ndarray:
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)


def forward(model: GGUFModel, ids: Sequence[int], keep_full: Sequence[int] = ()) -> dict:
    """Run the model on token ids. Returns {"logits": the last position's logits,
    "last_row": (layers, heads, tokens) attention of the last token, "full": {layer: (heads,
    tokens, tokens)} for the layers in `keep_full`}."""
    s = model.shape
    x = model.weight("token_embd.weight")[np.asarray(ids)]
    n = len(ids)
    mask = np.triu(np.full((n, n), -np.inf, dtype=np.float32), k=1)
    group = s.heads // s.kv_heads
    last_rows, full = [], {}
    for layer in range(s.layers):
        w = lambda part: model.weight(f"blk.{layer}.{part}.weight")  # noqa: E731
        a = rms_norm(x, w("attn_norm"), s.eps)
        q = rope((a @ w("attn_q").T).reshape(n, s.heads, s.head_dim), s.rope_base)
        k = rope((a @ w("attn_k").T).reshape(n, s.kv_heads, s.head_dim), s.rope_base)
        v = (a @ w("attn_v").T).reshape(n, s.kv_heads, s.head_dim)
        k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)   # grouped-query attention
        scores = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(s.head_dim) + mask
        weights = softmax(scores)                                           # (heads, n, n)
        last_rows.append(weights[:, -1, :])
        if layer in keep_full:
            full[layer] = weights
        x = x + np.einsum("hqk,khd->qhd", weights, v).reshape(n, -1) @ w("attn_output").T
        f = rms_norm(x, w("ffn_norm"), s.eps)
        gate, up = f @ w("ffn_gate").T, f @ w("ffn_up").T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ w("ffn_down").T
    last = rms_norm(x[-1], model.weight("output_norm.weight"), s.eps)
    logits = model.weight("token_embd.weight") @ last  # tied output embedding
    return {"logits": logits, "last_row": np.stack(last_rows), "full": full}


# --- reading a figure: the sink and the segments ------------------------------------------------

def sink_share(rows: np.ndarray) -> np.ndarray:
    """The share of attention on token 0 per layer (mean over heads) of (layers, heads, tokens)."""
    return rows[..., 0].mean(axis=-1)


def segment_shares(rows: np.ndarray, segments: dict[str, tuple[int, int]],
                   skip_sink: bool = True) -> dict[str, float]:
    """The attention on each [start, end) token span, averaged over every axis but the last
    (layers, heads); with `skip_sink`, token 0 left out and the rest renormalised, so the sink
    does not hide where the remaining attention goes. The shares sum to 1 over a tiling."""
    mean = np.asarray(rows, dtype=float).reshape(-1, np.shape(rows)[-1]).mean(axis=0)
    if skip_sink:
        mean = mean.copy()
        mean[0] = 0.0
    mean = mean / mean.sum()
    return {name: float(mean[a:b].sum()) for name, (a, b) in segments.items()}
