"""Retrieval explorer (Chapter 17): type a question, see the memories each ranking finds.

Three columns side by side: lexical (SQLite FTS5, BM25), dense (the embedding model, cosine) and
fused (reciprocal rank fusion of the two). Below them, the arithmetic that put the fused winner
first: its rank in each list and 1/(k + rank) for each.

The logic is plain functions (`rankings`, `ranking_rows`, `fusion_line`, `table_html`), tested in
tests/lesson_support/test_memory_widget.py; `retrieval_explorer()` only wires controls to them.
The index is anything with `lexical`, `dense` and `search` methods returning record ids (chapter
17's HybridIndex).
"""
from __future__ import annotations

import html
from typing import Mapping, Sequence

from course.i18n import N_, _

MODES = ("lexical", "dense", "fused")
MODE_LABELS = {"lexical": N_("lexical (BM25)"), "dense": N_("dense (embeddings)"),
               "fused": N_("fused (RRF)")}
RRF_K = 60  # the constant of reciprocal rank fusion (Cormack et al., 2009), chapter 17's default


def rankings(index, query: str, k: int = 5, user: str | None = None) -> dict[str, list[str]]:
    """The ids each ranking returns for `query`, best first (empty lists for a blank query)."""
    if not query.strip():
        return {mode: [] for mode in MODES}
    return {"lexical": list(index.lexical(query, k=k, user=user)),
            "dense": list(index.dense(query, k=k, user=user)),
            "fused": list(index.search(query, k=k, user=user, mode="fused"))}


def ranking_rows(found: Mapping[str, Sequence[str]], texts: Mapping[str, str]) -> list[dict]:
    """One row per rank: for each mode the id at that rank and its text ("" past a list's end)."""
    depth = max((len(ids) for ids in found.values()), default=0)
    rows = []
    for rank in range(depth):
        row = {"rank": rank + 1}
        for mode in MODES:
            ids = found.get(mode, [])
            record = ids[rank] if rank < len(ids) else ""
            row[mode] = (record, texts.get(record, "") if record else "")
        rows.append(row)
    return rows


def fusion_line(found: Mapping[str, Sequence[str]], k: int = RRF_K) -> str:
    """Why the fused list's first record is first: its rank in each list and 1/(k + rank)."""
    fused = found.get("fused") or []
    if not fused:
        return _("Type a question to rank the memories.")
    winner = fused[0]
    parts, total = {}, 0.0
    for mode in ("lexical", "dense"):
        ids = list(found.get(mode) or [])
        if winner in ids:
            rank = ids.index(winner) + 1
            total += 1 / (k + rank)
            parts[mode] = _("{mode} rank {rank}: 1/({k}+{rank}) = {score}").format(
                mode=_(MODE_LABELS[mode]), rank=rank, k=k, score=f"{1 / (k + rank):.4f}")
        else:
            asked = max(len(ids), len(fused))  # a ranking that found nothing was still asked for its top k
            parts[mode] = _("{mode}: not in its top {n}, adds 0").format(mode=_(MODE_LABELS[mode]), n=asked)
    return _("{record} is first: {lexical}; {dense}; fused score {total}.").format(
        record=winner, lexical=parts["lexical"], dense=parts["dense"], total=f"{total:.4f}")


def table_html(rows: Sequence[dict], expected: str | None = None) -> str:
    """The three rankings as an HTML table (memory texts escaped); the expected record, if
    given, is highlighted wherever it appears."""
    labels = [html.escape(_(MODE_LABELS[m])) for m in MODES]
    head = "".join(f"<th style='text-align:left;padding:2px 6px'>{label}</th>" for label in labels)
    body = []
    for row in rows:
        cells = []
        for mode in MODES:
            record, text = row[mode]
            mark = "background:#fff3b0;" if expected and record == expected else ""
            shown = f"<code>{html.escape(record)}</code> {html.escape(text)}" if record else "—"
            cells.append(f"<td style='{mark}padding:2px 6px;vertical-align:top;max-width:24em'>{shown}</td>")
        body.append(f"<tr><td style='padding:2px 6px'>{row['rank']}</td>{''.join(cells)}</tr>")
    return (f"<table style='font-size:12px;border-collapse:collapse'><tr><th>#</th>{head}</tr>"
            f"{''.join(body)}</table>")


def retrieval_explorer(index, texts: Mapping[str, str], examples: Sequence[str], user: str | None = None,
                       k: int = 5):
    """A question box (with example questions to pick) -> the three rankings and the fusion."""
    import ipywidgets as w

    pick = w.ToggleButtons(options=list(examples), value=examples[0] if examples else None,
                           style={"button_width": "auto"})
    box = w.Text(value=examples[0] if examples else "", description=_("question"),
                 continuous_update=False, layout=w.Layout(width="40em"))
    out = w.HTML()

    def show(*changes):
        found = rankings(index, box.value, k=k, user=user)
        out.value = (table_html(ranking_rows(found, texts))
                     + f"<p style='font-size:12px'>{html.escape(fusion_line(found))}</p>")

    def choose(change):
        if change["new"]:
            box.value = change["new"]

    pick.observe(choose, "value")
    box.observe(show, "value")
    show()
    return w.VBox([pick, box, out])
