"""Chapter 17's answers: what an agent keeps across sessions, and how it keeps it right.

    refusal.py        filter_records: secrets, credentials, other people's private data refused
    consolidation.py  consolidate: add, merge, update (supersede with validity), contradict
    forgetting.py     forget: by age, disuse, or an explicit request
    fusion.py         fuse_rankings: reciprocal rank fusion of lexical and dense rankings
    recall.py         score_answer: the recall benchmark's scorer, and the table with Wilson intervals

The lab's exercises are `filter_records`, `consolidate`, `fuse_rankings` and `score_answer`.
The data types are givens (course/givens/memory.py); the store, the index, extraction, the gated
pass and the benchmark are the library in lesson_support/memory/.
"""
from solutions.memory.consolidation import consolidate, consolidation_actions, same_value
from solutions.memory.forgetting import forget
from solutions.memory.fusion import fuse_rankings, rrf_scores
from solutions.memory.recall import recall_table, score_answer
from solutions.memory.refusal import filter_records, refusal_reason
from solutions.memory.self_test import self_test

__all__ = [
    "consolidate", "consolidation_actions", "filter_records", "forget", "fuse_rankings", "recall_table",
    "refusal_reason", "rrf_scores", "same_value", "score_answer", "self_test",
]
