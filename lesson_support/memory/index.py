"""HybridIndex: the memories ranked two ways in one SQLite file, and the two fused.

- lexical: SQLite's own FTS5, ranked by BM25. The indexed text is chapter 03's terms (words,
  and every pair of neighbouring Chinese characters), so a Chinese query finds a Chinese memory
  without a word segmenter. FTS5's trigram tokenizer was tried and rejected: it matches nothing
  shorter than three characters, and most Chinese words are two ('咖啡' found no row).
- dense: the cosine of an embedding (embedding.py), stored as a float32 BLOB in the same file and
  searched with numpy: the vectors are kept in memory as one normalised float32 matrix, and a
  query is one matrix-vector product on one core and a partial sort (np.partition). sqlite-vec would search inside
  SQLite, but Python's sqlite3 here is built without loadable extensions, and the product over
  100,000 vectors takes about 12 ms of one core here.
- fused: reciprocal rank fusion of the two, each asked for its top 2k only, as RRF is used in
  practice. An id just below 2k in both rankings could have fused into the top k and is left
  out. On the chapter's benchmark (benchmarks/bench_memory.py) the hits are the same as fusing
  the whole rankings for each user's memories (302 and 351 of 360 at k = 1 and 4), and higher in
  one index shared by all users (83 against 78, 159 against 148), where the whole rankings let
  other users' look-alikes, deep in both lists, add up their votes.

Both rankings ask SQLite and numpy for the top k and nothing more: FTS5 orders its matches by
score and rowid and only the top k are looked up for their ids (rowids follow the ids within one
`add`), so a query over 100,000 memories costs tens of milliseconds, the query's embedding the
largest part (benchmarks/bench_memory.py).

The index is derived: `from_records(store.records())` rebuilds it from the note files at any time.
"""
from __future__ import annotations

import hashlib
import sqlite3

import numpy as np

from course.givens.gssc.matching import query_terms, terms
from solutions.memory import fuse_rankings
from lesson_support.memory.embedding import DIMENSIONS

MODES = ("lexical", "dense", "fused")
SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS lexical USING fts5(id UNINDEXED, owner, terms,
    tokenize = 'unicode61 remove_diacritics 0');
CREATE TABLE IF NOT EXISTS vectors (id TEXT PRIMARY KEY, user TEXT NOT NULL, vector BLOB NOT NULL);
"""


def owner_token(user: str) -> str:
    """One token standing for a user, so FTS5 filters by user inside the match (a user id like
    "u-7" would be two tokens): 'o' and 16 hex digits of its hash."""
    return "o" + hashlib.blake2b(user.encode("utf-8"), digest_size=8).hexdigest()


def indexed_text(text: str) -> str:
    return " ".join(sorted(terms(text)))


def fts_query(query: str) -> str | None:
    """An FTS5 query matching any of the query's terms (each quoted: no FTS5 syntax gets through)."""
    wanted = sorted(query_terms(query))
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in wanted) or None


class HybridIndex:
    def __init__(self, path=":memory:", embedder=None):
        self.db = sqlite3.connect(str(path))
        self.db.executescript(SCHEMA)
        self.embedder = embedder
        self._matrix = None   # the vectors as one numpy matrix, rebuilt after an add
        self._ids: list[str] = []
        self._rows: dict[str, np.ndarray] = {}   # user -> their rows in the matrix

    @classmethod
    def from_records(cls, records, embedder=None, path=":memory:") -> "HybridIndex":
        index = cls(path, embedder)
        index.add(records)
        return index

    def __len__(self) -> int:
        return self.db.execute("SELECT count(*) FROM vectors").fetchone()[0] if self.embedder else \
            self.db.execute("SELECT count(*) FROM lexical").fetchone()[0]

    def add(self, records, texts=None):
        """Index records (their `text`, or `texts` given alongside); an id indexed again replaces it."""
        records = list(records)
        texts = list(texts) if texts is not None else [r.text for r in records]
        # inserted in id order, so that a tie in BM25, broken by rowid (see lexical), is broken by id
        order = sorted(range(len(records)), key=lambda i: records[i].id)
        records, texts = [records[i] for i in order], [texts[i] for i in order]
        ids = [r.id for r in records]
        if not all(ids) or len(set(ids)) != len(ids):
            raise ValueError("every record indexed needs its own id (store it first)")
        with self.db:
            self.db.executemany("DELETE FROM lexical WHERE id = ?", [(i,) for i in ids])
            self.db.executemany("INSERT INTO lexical (id, owner, terms) VALUES (?, ?, ?)",
                                [(r.id, owner_token(r.user), indexed_text(t)) for r, t in zip(records, texts)])
            if self.embedder is not None:
                vectors = self.embedder.passages(texts)
                self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                                    [(r.id, r.user, v.astype(np.float32).tobytes())
                                     for r, v in zip(records, vectors)])
        self._matrix = None

    def lexical(self, query: str, k: int = 10, user: str | None = None) -> list[str]:
        """Ids by BM25 (best first; ties by rowid, which is id order within one `add`); only rows
        sharing a term with the query."""
        match = fts_query(query)
        if match is None:
            return []
        if user is not None:
            match = f"owner : {owner_token(user)} AND terms : ({match})"
        else:
            match = f"terms : ({match})"
        # The top k by score and rowid first, then their ids: reading the id of every match (8,000
        # of 100,000 for a common word) to break ties by it took half the query's time.
        sql = ("WITH best AS (SELECT rowid AS r, bm25(lexical, 0, 0, 1) AS score FROM lexical"
               " WHERE lexical MATCH ? ORDER BY score, rowid LIMIT ?)"
               " SELECT lexical.id FROM best JOIN lexical ON lexical.rowid = best.r ORDER BY best.score, best.r")
        return [row[0] for row in self.db.execute(sql, (match, k))]

    def _load(self):
        rows = self.db.execute("SELECT id, user, vector FROM vectors ORDER BY rowid").fetchall()
        self._ids = [r[0] for r in rows]
        by_user: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            by_user.setdefault(r[1], []).append(i)
        self._rows = {u: np.array(i) for u, i in by_user.items()}
        self._matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), DIMENSIONS)

    def dense(self, query: str, k: int = 10, user: str | None = None) -> list[str]:
        """Ids by cosine with the query's embedding (best first; ties by id)."""
        if self.embedder is None:
            raise ValueError("this index has no embedder: dense search needs one")
        if self._matrix is None:
            self._load()
        if not self._ids:
            return []
        rows = self._rows.get(user, np.array([], dtype=int)) if user else np.arange(len(self._ids))
        if len(rows) == 0:
            return []
        # einsum, not @: numpy's BLAS splits a product over threads that wait for each other on a
        # busy machine (a 2,000-row product took 36 ms here instead of 0.1); einsum uses one core
        matrix = self._matrix[rows] if user else self._matrix   # only the rows searched
        scores = np.einsum("ij,j->i", matrix, self.embedder.query(query))
        # rounded, so that equal texts tie exactly; every row tied with the k-th best is a
        # candidate, so the ids that break the ties decide, never the rows' order
        scores = np.round(scores, 6)
        kth = -np.partition(-scores, k - 1)[k - 1] if len(rows) > k else -np.inf
        best = np.flatnonzero(scores >= kth)
        order = sorted(best, key=lambda j: (-float(scores[j]), self._ids[rows[j]]))[:k]
        return [self._ids[rows[j]] for j in order]

    def search(self, query: str, k: int = 10, user: str | None = None, mode: str = "fused") -> list[str]:
        """The top `k` ids by one ranking or by both fused (each ranking asked for its top 2k)."""
        if mode == "lexical":
            return self.lexical(query, k, user)
        if mode == "dense":
            return self.dense(query, k, user)
        if mode != "fused":
            raise ValueError(f"mode is one of {', '.join(MODES)}; got {mode!r}")
        return fuse_rankings([self.lexical(query, 2 * k, user), self.dense(query, 2 * k, user)], limit=k)
