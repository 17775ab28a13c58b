"""A KV cache from scratch (Chapter 05): a tiny attention-only transformer in numpy.

What it is for: to show, with numbers a student can print, what a model keeps in its KV cache,
why a decode step with the cache gives the same answer as recomputing everything, why an edit
to one early token throws away every cached row after it, and why reading a prompt (prefill)
costs work that grows with the square of its length.

What it is not: a trained model. Its weights are random (from a fixed seed), so its attention
patterns mean nothing about language. Each layer is pre-norm, single-head self-attention with a
residual connection and no MLP, which is all the cache argument needs.

The textbook's worked example (experiment 2-2) and the attention-sink toy use the same
`attention_weights` function on hand-picked or seeded vectors; see `worked_example` and
`sink_demo`.
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field

import numpy as np

# ---------------------------------------------------------------------------------------------
# The attention core: one query against the keys before it.


def softmax(scores: np.ndarray) -> np.ndarray:
    """Softmax along the last axis; -inf entries (masked positions) get weight 0."""
    shifted = scores - np.max(scores, axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / np.sum(exp, axis=-1, keepdims=True)


def attention_weights(query: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Scaled dot-product weights of one query over the rows of `keys` (they sum to 1)."""
    return softmax(keys @ query / np.sqrt(query.shape[-1]))


def causal_attention(queries: np.ndarray, keys: np.ndarray, values: np.ndarray):
    """Every row attends to itself and the rows before it. Returns (weights n×n, outputs n×d)."""
    n = queries.shape[0]
    scores = queries @ keys.T / np.sqrt(queries.shape[-1])
    scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    weights = softmax(scores)
    return weights, weights @ values


# ---------------------------------------------------------------------------------------------
# Experiment 2-2's worked example: "北京 的 天气 怎么样" (How's the weather in Beijing?)

WORKED_TOKENS = ("北京", "的", "天气", "怎么样")
WORKED_GLOSS = ("Beijing", "(possessive particle)", "weather", "how is it")
# The textbook's figure 2-6: the weights "怎么样" gives each word (its own 0.05 is not drawn).
TEXTBOOK_WEIGHTS = {"北京": 0.35, "的": 0.05, "天气": 0.55, "怎么样": 0.05}
# Four features a key can be labelled with (the textbook's table 2-1: "北京" leans to place
# names, "天气" to meteorology).
FEATURES = ("place", "weather", "function word", "question")


def worked_example() -> dict:
    """Hand-picked vectors for the four words, chosen by us: the textbook gives only the weights.

    Each key is its word's label: three units of its own feature (北京 place, 的 function
    word, 天气 weather, 怎么样 question). "怎么样" asks for weather (1.6)
    and, a little less, a place (1.3); the other queries are ours too, to fill the heat map.
    Values are one unit of the word's own feature, so the output reads as "how much of each
    kind of content the word took in".
    """
    own_feature = [FEATURES.index(f) for f in ("place", "function word", "weather", "question")]
    keys = 3.0 * np.eye(4)[own_feature]
    values = np.eye(4)[own_feature]
    queries = np.array([[1.0, 0.0, 0.0, 0.0],   # 北京: mostly itself
                        [1.2, 0.0, 0.0, 0.0],   # 的: belongs to the noun before it
                        [1.0, 1.0, 0.0, 0.0],   # 天气: weather, of which place?
                        [1.3, 1.6, 0.0, 0.0]])  # 怎么样: weather first, then place
    weights, outputs = causal_attention(queries, keys, values)
    return {"tokens": WORKED_TOKENS, "queries": queries, "keys": keys, "values": values,
            "weights": weights, "outputs": outputs}


# ---------------------------------------------------------------------------------------------
# The attention-sink toy.


def sink_demo(n: int = 12, d: int = 8, strength: float = 3.5, seed: int = 0) -> dict:
    """Seeded random queries and keys for `n` tokens, with and without a learned-looking sink.

    The sink is one extra dimension: the first token's key has `strength` in it, and so does
    every query, so every query's score for the first token rises by strength² / sqrt(d+1).
    The first token's value is zero: attending to it adds nothing, which is how a head can
    "look at nothing" although its weights must sum to 1. This is a hand-made toy; real models
    learn something like it in training (the textbook's experiment 2-2 reports first-token
    shares above 70%).
    """
    rng = np.random.default_rng(seed)
    queries, keys, values = (rng.standard_normal((n, d)) for _ in range(3))
    values[0] = 0.0
    pad = np.zeros((n, 1))
    plain_q, plain_k = np.hstack([queries, pad]), np.hstack([keys, pad])
    sink_q, sink_k = plain_q.copy(), plain_k.copy()
    sink_q[:, -1] = strength
    sink_k[0, -1] = strength
    plain_w, plain_out = causal_attention(plain_q, plain_k, values)
    sink_w, sink_out = causal_attention(sink_q, sink_k, values)
    return {"n": n, "plain_weights": plain_w, "sink_weights": sink_w,
            "plain_outputs": plain_out, "sink_outputs": sink_out,
            "even_share": np.array([1.0 / (i + 1) for i in range(n)])}


def first_token_share(weights: np.ndarray) -> np.ndarray:
    """The weight each row (from the second on) gives the first token."""
    return weights[1:, 0]


# ---------------------------------------------------------------------------------------------
# A tiny transformer with an explicit KV cache.


@dataclass(frozen=True)
class Layer:
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray


@dataclass(frozen=True)
class TinyModel:
    """Random weights from `seed`; any string is a token (its embedding comes from its hash)."""
    d: int = 16
    n_layers: int = 2
    seed: int = 0
    layers: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        rng = np.random.default_rng(self.seed)
        scale = 1.0 / np.sqrt(self.d)
        layers = tuple(Layer(*(rng.standard_normal((self.d, self.d)) * scale for _ in range(4)))
                       for _ in range(self.n_layers))
        object.__setattr__(self, "layers", layers)

    def embed(self, token: str, position: int) -> np.ndarray:
        """The token's vector (seeded by a hash of its text, the same on every machine) plus
        a sinusoidal position code, so the same token at another position is another input."""
        return token_vector(token, self.d, self.seed) + position_code(position, self.d)


@functools.lru_cache(maxsize=4096)
def token_vector(token: str, d: int, seed: int) -> np.ndarray:
    """Cached, because building a generator per token would dominate a long prefill's time."""
    digest = hashlib.sha256(f"{seed}:{token}".encode("utf-8")).digest()
    vector = np.random.default_rng(int.from_bytes(digest[:8], "little")).standard_normal(d)
    vector.flags.writeable = False
    return vector


def position_code(position: int, d: int) -> np.ndarray:
    rates = 1.0 / (10000 ** (np.arange(0, d, 2) / d))
    code = np.zeros(d)
    code[0::2] = np.sin(position * rates)
    code[1::2] = np.cos(position * rates)
    return code


def rms_norm(x: np.ndarray) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6)


@dataclass
class Work:
    """What a computation did. kv_rows: key/value rows computed (one per token per layer);
    scores: query-key dot products; flops: multiply-adds of projections and attention."""
    kv_rows: int = 0
    scores: int = 0
    flops: int = 0

    def add_rows(self, model: TinyModel, rows: int, attended: int) -> None:
        """`rows` new tokens in one layer, which together compare against `attended` keys."""
        self.kv_rows += rows
        self.scores += attended
        self.flops += 4 * rows * model.d * model.d + 2 * attended * model.d


@dataclass(frozen=True)
class KVCache:
    """Per layer, the keys and values of every token read so far (row i = token i)."""
    tokens: tuple
    keys: tuple      # one (len(tokens) × d) array per layer
    values: tuple

    def __len__(self) -> int:
        return len(self.tokens)

    def truncated(self, length: int) -> "KVCache":
        """The cache of the first `length` tokens: the rows before an edit, reused as they are."""
        return KVCache(self.tokens[:length], tuple(k[:length] for k in self.keys),
                       tuple(v[:length] for v in self.values))


def empty_cache(model: TinyModel) -> KVCache:
    empty = tuple(np.zeros((0, model.d)) for _ in range(model.n_layers))
    return KVCache((), empty, empty)


@dataclass(frozen=True)
class Step:
    """The result of reading some tokens: the new cache, the last layer's output rows, and the
    attention weights of the last token read in each layer (over every cached row)."""
    cache: KVCache
    outputs: np.ndarray
    last_weights: tuple


def extend(model: TinyModel, cache: KVCache, tokens, work: Work | None = None) -> Step:
    """Read `tokens` after what `cache` holds, computing K/V only for the new tokens.

    With an empty cache this is prefill; with one token it is a decode step. Every new token
    attends to all cached rows and to the new tokens up to itself.
    """
    tokens = tuple(tokens)
    if not tokens:
        raise ValueError("nothing to read: pass at least one token")
    start, n = len(cache), len(tokens)
    x = np.stack([model.embed(t, start + i) for i, t in enumerate(tokens)])
    keys, values, last = [], [], []
    mask = np.tril(np.ones((n, start + n), dtype=bool), k=start)
    for layer, old_k, old_v in zip(model.layers, cache.keys, cache.values):
        h = rms_norm(x)
        q = h @ layer.w_q
        k = np.vstack([old_k, h @ layer.w_k])
        v = np.vstack([old_v, h @ layer.w_v])
        scores = np.where(mask, q @ k.T / np.sqrt(model.d), -np.inf)
        weights = softmax(scores)
        x = x + (weights @ v) @ layer.w_o
        keys.append(k)
        values.append(v)
        last.append(weights[-1])
        if work is not None:
            work.add_rows(model, n, int(mask.sum()))
    return Step(KVCache(cache.tokens + tokens, tuple(keys), tuple(values)), x, tuple(last))


def prefill(model: TinyModel, tokens, work: Work | None = None) -> Step:
    """Read a whole prompt from scratch."""
    return extend(model, empty_cache(model), tokens, work)


def decode(model: TinyModel, cache: KVCache, token: str, work: Work | None = None) -> Step:
    """One token with the cache: one new K/V row per layer, one comparison per cached row."""
    return extend(model, cache, (token,), work)


def prefill_work(model: TinyModel, length: int) -> Work:
    """The work `prefill` does for `length` tokens, counted without running it."""
    work = Work()
    for _ in range(model.n_layers):
        work.add_rows(model, length, length * (length + 1) // 2)
    return work


def generation_work(model: TinyModel, prompt_length: int, new_tokens: int, cached: bool) -> Work:
    """Reading a prompt and then writing `new_tokens`, one at a time.

    Without a cache every step reads the whole sequence so far again (prefill of it); with a
    cache every step reads only its own token against the cached rows.
    """
    total = prefill_work(model, prompt_length)
    for length in range(prompt_length + 1, prompt_length + new_tokens + 1):
        step = prefill_work(model, length) if not cached else Work()
        if cached:
            for _ in range(model.n_layers):
                step.add_rows(model, 1, length)
        total.kv_rows += step.kv_rows
        total.scores += step.scores
        total.flops += step.flops
    return total


# ---------------------------------------------------------------------------------------------
# Edits: what survives in the cache.


def common_prefix_length(old, new) -> int:
    """How many tokens the two sequences share from the very first one."""
    length = 0
    for a, b in zip(old, new):
        if a != b:
            break
        length += 1
    return length


@dataclass(frozen=True)
class Reuse:
    kept: int        # cached rows reused (per layer): the longest common prefix
    recompute: int   # rows of the new sequence that must be computed again (per layer)

    @property
    def kept_rows(self) -> range:
        return range(self.kept)

    @property
    def recompute_rows(self) -> range:
        return range(self.kept, self.kept + self.recompute)


def reuse_plan(old, new) -> Reuse:
    """Which cached K/V rows of `old` a request for `new` can reuse, and which it must compute."""
    kept = common_prefix_length(old, new)
    return Reuse(kept, len(new) - kept)


def resume(model: TinyModel, cache: KVCache, new_tokens, work: Work | None = None) -> Step:
    """Read `new_tokens` reusing `cache` where it matches: keep the common prefix, recompute
    the rest. The result equals `prefill(model, new_tokens)`."""
    new_tokens = tuple(new_tokens)
    plan = reuse_plan(cache.tokens, new_tokens)
    if plan.recompute == 0:
        # everything is cached; re-read the last token so there is an output and weights
        plan = Reuse(plan.kept - 1, 1)
    return extend(model, cache.truncated(plan.kept), new_tokens[plan.kept:], work)


def changed_rows(model: TinyModel, old, new, tolerance: float = 1e-9) -> list[list[int]]:
    """Per layer, the rows whose key or value differ between `old` and `new` (same length).

    Shows why a prefix is all that survives: in layer 1 a row depends only on its own token
    and position, so only the edited row changes; from layer 2 on a row's input already
    mixes every earlier token, so every row from the edit on changes.
    """
    if len(old) != len(new):
        raise ValueError("compare sequences of the same length (an edit replaces one token)")
    a, b = prefill(model, old).cache, prefill(model, new).cache
    changed = []
    for ka, va, kb, vb in zip(a.keys, a.values, b.keys, b.values):
        differs = (np.abs(ka - kb).max(axis=1) > tolerance) | (np.abs(va - vb).max(axis=1) > tolerance)
        changed.append([int(i) for i in np.flatnonzero(differs)])
    return changed
