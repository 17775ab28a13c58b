"""Context rot, measured: a pass key hidden at a depth in filler of a given length, with and
without distractors, on a real model.

Every trial is independent: its own key and its own filler, generated from the trial's seed, so
no two trials share a document prefix (a shared prefix would let the KV cache, and the same
text, make trials copies of each other). Only the system instruction and the template's header
are the same in every trial; each trial records the cached tokens its backend reported, and
`independence` checks that no trial reused more than that header.

A cell (length, depth, distractors) is scored with chapter 12's Wilson interval by lab 16's
answer (`solutions.real_model.needle_cells`, here `cells`); `heat_map` draws the grid.
"""
from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from lesson_support.real_model.filler import haystack, letters
from lesson_support.real_model.stream import stream_summary, timed_stream
from course.usage import read_usage
from solutions.real_model import needle_cells as cells  # noqa: F401 (the lab's answer scores the grid)

DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)
INSTRUCTION = "You answer questions about the document the user gives you, from the document only."
NEEDLE = "The pass key for the vault is {key}. Remember it: {key} is the pass key for the vault."
DISTRACTORS = ("The pass key for the locker is {key}.", "The pass key for the garage is {key}.")
QUESTION = "What is the pass key for the vault? Answer with the five-digit number only."
NUMBER = re.compile(r"\d{5}")


def trial_context(seed: int, length: int, depth: float, distractors: int,
                  count: Callable[[str], int]) -> dict:
    """One trial's messages and its answer key: filler of about `length` tokens, the needle after
    `depth` of its sentences, `distractors` look-alike keys at other random places."""
    if not 0.0 <= depth <= 1.0:
        raise ValueError(f"depth must be within [0, 1], got {depth}")
    if not 0 <= distractors <= len(DISTRACTORS):
        raise ValueError(f"distractors must be 0..{len(DISTRACTORS)}, got {distractors}")
    rng = random.Random(f"needle-{seed}")
    keys = rng.sample(range(10_000, 100_000), 1 + distractors)
    sentences = haystack(seed, length, count)
    at = round(depth * len(sentences))
    decoys = [DISTRACTORS[i].format(key=keys[1 + i]) for i in range(distractors)]
    for decoy in decoys:  # inserted first; the needle's depth counts filler sentences only
        sentences.insert(rng.randrange(len(sentences) + 1), decoy)
    sentences.insert(_position(sentences, decoys, at), NEEDLE.format(key=keys[0]))
    document = f"Log book {letters(seed)}.\n" + " ".join(sentences)  # differs from its third word
    return {"messages": [{"role": "system", "content": INSTRUCTION},
                         {"role": "user", "content": f"Document:\n{document}\n\nQuestion: {QUESTION}"}],
            "key": str(keys[0]), "decoys": [str(k) for k in keys[1:]]}


def _position(sentences: list[str], decoys: list[str], filler_before: int) -> int:
    """The index after `filler_before` filler sentences (decoys do not count toward depth)."""
    seen = 0
    for i, sentence in enumerate(sentences):
        if seen == filler_before:
            return i
        if sentence not in decoys:
            seen += 1
    return len(sentences)


def score(reply: str, key: str, decoys: Sequence[str]) -> dict:
    """The first five-digit number in the reply is the answer: right, a decoy, or something
    else (including no number at all)."""
    found = NUMBER.search(reply)
    answer = found.group(0) if found else None
    return {"answer": answer, "success": answer == key, "took_decoy": answer in decoys}


def run_trial(request, seed: int, length: int, depth: float, distractors: int,
              count: Callable[[str], int], max_tokens: int = 24) -> dict:
    """One trial. `max_tokens` leaves room for a reply that restates the question before the
    key ("The pass key for the vault is 68272": 13 SmolLM2 tokens, one per digit); 12 cut such
    answers short and scored them as misses."""
    context = trial_context(seed, length, depth, distractors, count)
    record = timed_stream(lambda: request(context["messages"], max_tokens=max_tokens, temperature=0.0,
                                          seed=seed))
    reply = stream_summary(record).get("text", "")
    usage = read_usage(record["usage"]) if record["usage"] else None
    return {"seed": seed, "length": length, "depth": depth, "distractors": distractors,
            "key": context["key"], "reply": reply, **score(reply, context["key"], context["decoys"]),
            "prompt_tokens": usage.prompt if usage else None,
            "cached_tokens": usage.cached if usage else None}


def run_grid(request, count: Callable[[str], int], lengths: Sequence[int], depths: Sequence[float] = DEPTHS,
             distractors: Sequence[int] = (0, 2), trials: int = 10, seed: int = 0,
             progress: Callable[[str], None] = lambda _: None,
             after_trial: Callable[[list[dict]], None] = lambda _: None) -> list[dict]:
    """`trials` independent trials per (length, depth, distractors) cell, every trial with its
    own seed; cells interleaved trial by trial, so a slow stretch of the machine spreads over
    all cells instead of landing on one. `after_trial(rows so far)` lets a caller save them."""
    rows = []
    grid = [(n, d, k) for n in lengths for d in depths for k in distractors]
    for t in range(trials):
        for c, (length, depth, k) in enumerate(grid):
            trial_seed = seed + t * len(grid) + c
            row = run_trial(request, trial_seed, length, depth, k, count)
            rows.append(row)
            after_trial(rows)
            progress(f"trial {t} length {length} depth {depth} distractors {k}: "
                     f"{row['answer']} vs {row['key']} ({'ok' if row['success'] else 'miss'})")
    return rows


def independence(rows: Sequence[dict]) -> dict:
    """The most any trial took from the cache, against its prompt: trials are independent when
    the largest cached prefix is only the shared header (far below the shortest prompt)."""
    cached = [r["cached_tokens"] for r in rows if r["cached_tokens"] is not None]
    prompts = [r["prompt_tokens"] for r in rows if r["prompt_tokens"] is not None]
    return {"trials": len(rows), "max_cached_tokens": max(cached) if cached else None,
            "min_prompt_tokens": min(prompts) if prompts else None,
            "distinct_keys": len({r["key"] for r in rows})}


def heat_map(cell_rows: Sequence[dict], title: str = "", axes=None):
    """One panel per distractor setting: lengths down, depths across, colour the success rate,
    each cell labelled successes/n and its 95% Wilson interval."""
    import matplotlib.pyplot as plt
    import numpy as np

    settings = sorted({c["distractors"] for c in cell_rows})
    if axes is None:
        _, axes = plt.subplots(1, len(settings), figsize=(5.2 * len(settings), 3.6), squeeze=False)
        axes = axes[0]
    for ax, k in zip(axes, settings):
        these = [c for c in cell_rows if c["distractors"] == k]
        lengths = sorted({c["length"] for c in these})
        depths = sorted({c["depth"] for c in these})
        grid = np.full((len(lengths), len(depths)), np.nan)
        for c in these:
            i, j = lengths.index(c["length"]), depths.index(c["depth"])
            grid[i, j] = c["rate"]
            ax.text(j, i, f"{c['successes']}/{c['n']}\n[{c['low']:.2f}–{c['high']:.2f}]",
                    ha="center", va="center", fontsize=8,
                    color="white" if c["rate"] < 0.5 else "black")
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(depths)), [f"{d:.0%}" for d in depths])
        ax.set_yticks(range(len(lengths)), [f"{n:,}" for n in lengths])
        ax.set_xlabel("depth of the pass key in the document")
        ax.set_ylabel("document length (model tokens)")
        ax.set_title(f"{title}{'no distractors' if k == 0 else f'{k} distractors'}")
    plt.colorbar(image, ax=list(axes), label="pass key found (rate)")
    return axes
