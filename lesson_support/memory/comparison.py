"""Lexical, dense and fused retrieval side by side on the benchmark's questions.

For every question and each of its three phrasings (the user's words, a paraphrase, the other
language), does each ranking put what the question needs in its top k? "What it needs" is the
user's current memories of the question's slot (for an open item, the one with its error code;
for an aggregate, any of its values). Two scopes: each user's own memories (`pooled=False`, a
dozen or so: almost anything finds them at k=4), and everybody's in one index (`pooled=True`,
a shared team memory: 360 memories, many alike, where an error code or a paraphrase decides).
A phrasing one ranking finds and the other misses is an example of where the first wins.
"""
from __future__ import annotations

from lesson_support.memory.index import MODES, HybridIndex
from lesson_support.memory.strategies import prepare

PHRASINGS = ("the user's words", "a paraphrase", "the other language")


def needed(records, bench_question) -> set[str]:
    if bench_question.key == "todo":
        return {r.id for r in records if r.key == "todo" and bench_question.about in r.value}
    return {r.id for r in records if r.key == bench_question.key}


def retrieval_hits(histories, embedder, k: int = 4, pooled: bool = False) -> list[dict]:
    """One row per (question with something to find, phrasing, mode): {"question", "kind",
    "slot" ("todo" or "other"), "phrasing", "text", "mode", "hit"}."""
    memories = {h.user: prepare("consolidated", h, embedder) for h in histories}
    shared = HybridIndex.from_records([r for m in memories.values() for r in m.records], embedder) if pooled else None
    rows = []
    for history in histories:
        memory = memories[history.user]
        for bq in history.questions:
            wanted = needed(memory.records, bq)
            if not wanted:   # abstain: nothing to find
                continue
            for p, text in enumerate(bq.phrasings):
                for mode in MODES:
                    found = set((shared or memory.index).search(text, k, mode=mode))
                    hit = bool(wanted & found) if bq.question.kind == "aggregate" else wanted <= found
                    rows.append({"question": bq.question.id, "kind": bq.question.kind,
                                 "slot": "todo" if bq.key == "todo" else "other", "phrasing": PHRASINGS[p],
                                 "text": text, "mode": mode, "hit": hit})
    return rows


def hit_rates(rows) -> dict:
    """{(slot, phrasing, mode): [hits, n]}, with "all" for either slot and for all phrasings."""
    table: dict = {}
    for row in rows:
        for slot in (row["slot"], "all"):
            for phrasing in (row["phrasing"], "all"):
                cell = table.setdefault((slot, phrasing, row["mode"]), [0, 0])
                cell[0] += row["hit"]
                cell[1] += 1
    return table


def wins(rows, winner: str, loser: str) -> list[dict]:
    """The phrasings `winner` found and `loser` did not: {"question", "text", "kind", "phrasing"}."""
    by: dict = {}
    for row in rows:
        by.setdefault((row["question"], row["text"]), {})[row["mode"]] = row
    return [{"question": q, "text": t, "kind": modes[winner]["kind"], "phrasing": modes[winner]["phrasing"]}
            for (q, t), modes in by.items() if modes[winner]["hit"] and not modes[loser]["hit"]]
