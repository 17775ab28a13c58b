"""The strategies compared on the recall benchmark, run with chapter 12's harness.

What differs between strategies is what reaches the context; the *reader* that answers from it
is one documented rule for all (the teaching model's kind of simulation), so differences in the
table come from memory, not from a reader that is cleverer for one of them:

    the reader looks in its context for records of the slot the question asks about (a real
    model understands the question; the rule is told the slot), and answers
      - nothing found: "I don't know";
      - an aggregate: every value found; a time question: the date of the record with that value;
      - otherwise: the value of the first record found, in context order (ranked best first).

Strategies (what the context holds):

    no_memory             nothing
    full_history          every past session's transcript, newest kept when it exceeds
                          HISTORY_BUDGET tokens (the reader reads it newest first)
    notes_only            chapter 06's notes: what an agent notes within a task (decisions and
                          open items, not facts about the user), found by chapter 06's search
    retrieval             extracted + filtered records, not consolidated, top K fused
    consolidated          + consolidation (current records only), top K fused
    consolidated_lexical  the same, BM25 only
    consolidated_dense    the same, embeddings only

A trial is one question under one seed; the seed picks the phrasing (the user's words, a
paraphrase, the other language). Success is judged by `score_answer` (code, on the answer).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from course.givens.memory import IDK
from course.tokenizer import count_tokens
from solutions.evaluation import run_trials
from solutions.memory import consolidate, recall_table, same_value, score_answer
from solutions.notes import Note, search_notes
from lesson_support.memory.extraction import extract, extract_and_filter
from lesson_support.memory.index import HybridIndex

STRATEGIES = ("no_memory", "full_history", "notes_only", "retrieval", "consolidated",
              "consolidated_lexical", "consolidated_dense")
MODE = {"retrieval": "fused", "consolidated": "fused", "consolidated_lexical": "lexical",
        "consolidated_dense": "dense"}
K = 4                  # records retrieved per question
HISTORY_BUDGET = 600   # tokens of transcript the full-history strategy keeps (the newest)
SEEDS = (0, 1, 2)      # the three phrasings


def render(records) -> str:
    """Records as the context shows them: one line each, dated."""
    return "\n".join(f"[{r.time:%Y-%m-%d}] {r.text}" for r in records)


def read(records, bench_question) -> str:
    """The reader rule (module docstring): an answer from records in context order."""
    key, about, kind = bench_question.key, bench_question.about, bench_question.question.kind
    if key == "todo":
        found = [r for r in records if r.key == "todo" and about in r.value]
    else:
        found = [r for r in records if r.key == key]
    if not found:
        return IDK
    if kind == "aggregate":
        return ", ".join(dict.fromkeys(r.value for r in found))
    if kind == "time":
        dated = [r for r in found if same_value(r.value, about)]
        return f"{dated[0].time:%Y-%m-%d}" if dated else IDK
    return found[0].value


@dataclass
class Prepared:
    """One user's memory as a strategy keeps it, built once for every question and seed."""
    records: list
    index: HybridIndex | None = None
    transcript: list | None = None   # full history: (record or None, line) newest first


def prepare(strategy: str, history, embedder=None) -> Prepared:
    if strategy == "no_memory":
        return Prepared([])
    if strategy == "full_history":
        lines, used = [], 0
        for session in reversed(history.sessions):
            found = {c.message: c for c in extract(session)}
            for i in reversed(range(len(session.messages))):
                m = session.messages[i]
                line = f"[{session.time:%Y-%m-%d}] {m['role']}: {m['content']}"
                used += count_tokens(line)
                if used > HISTORY_BUDGET:
                    return Prepared([], transcript=lines)
                lines.append((found.get(i) if m["role"] == "user" else None, line))
        return Prepared([], transcript=lines)
    kept = [r for s in history.sessions for r in extract_and_filter(s)[0]]
    kept = [replace(r, id=f"{history.user}-m{i}") for i, r in enumerate(kept)]
    if strategy == "notes_only":
        return Prepared([r for r in kept if r.kind in ("decision", "open_item")])
    if strategy != "retrieval":
        kept = [r for r in consolidate([], kept) if r.current]
    return Prepared(kept, HybridIndex.from_records(kept, embedder))


def notes_of(records) -> list[Note]:
    return [Note(f"note-{i + 1:04d}", r.text, "action" if r.kind == "open_item" else "conclusion", (), r.time,
                 r.time, r.text) for i, r in enumerate(records)]


def answer(strategy: str, prepared: Prepared, bench_question, seed: int) -> dict:
    """{"answer", "prompt_tokens", "context"} for one question, phrased by `seed`."""
    question = bench_question.phrasing(seed)
    if strategy == "full_history":
        context_records = [r for r, _ in prepared.transcript if r is not None]
        context = "\n".join(line for _, line in reversed(prepared.transcript))
    elif strategy == "notes_only":
        by_text = {r.text: r for r in prepared.records}
        notes = search_notes(notes_of(prepared.records), question.text, limit=K)
        context_records = [by_text[n.title] for n in notes]
        context = render(context_records)
    elif strategy == "no_memory":
        context_records, context = [], ""
    else:
        ids = prepared.index.search(question.text, K, mode=MODE[strategy])
        by_id = {r.id: r for r in prepared.records}
        context_records = [by_id[i] for i in ids]
        context = render(context_records)
    return {"answer": read(context_records, bench_question), "context": context,
            "prompt_tokens": count_tokens(context + "\n" + question.text)}


def run_benchmark(histories, strategies=STRATEGIES, seeds=SEEDS, embedder=None) -> list[dict]:
    """run_trials rows (chapter 12) for every strategy, each with "strategy", "kind", "answer"."""
    rows = []
    for strategy in strategies:
        if MODE.get(strategy, "lexical") != "lexical" and embedder is None:
            raise ValueError(f"{strategy} needs an embedder (lesson_support.memory.Embedder)")
        prepared = {h.user: prepare(strategy, h, embedder) for h in histories}
        tasks = [{"id": q.question.id, "db": {"correct": None}, "expected": {"correct": True},
                  "bench": q, "user": h.user} for h in histories for q in h.questions]
        answers = {}

        def agent(task, config, seed, db):
            result = answer(strategy, prepared[task["user"]], task["bench"], seed)
            db["correct"] = score_answer(task["bench"].phrasing(seed), result["answer"])
            answers[(task["id"], seed)] = result["answer"]
            return {"prompt_tokens": result["prompt_tokens"]}

        kinds = {t["id"]: t["bench"].question.kind for t in tasks}
        for row in run_trials(agent, tasks, {"strategy": strategy}, seeds):
            rows.append({**row, "strategy": strategy, "kind": kinds[row["task"]],
                         "answer": answers[(row["task"], row["seed"])]})
    return rows


def summary(rows) -> list[dict]:
    """One row per strategy and question kind (and "all"): rate, Wilson interval, tokens per answer."""
    table = recall_table(rows) | recall_table([{**r, "kind": "all"} for r in rows])
    return [{"strategy": s, "kind": k, **v} for (s, k), v in sorted(
        table.items(), key=lambda item: (STRATEGIES.index(item[0][0]) if item[0][0] in STRATEGIES else 99, item[0][1]))]
