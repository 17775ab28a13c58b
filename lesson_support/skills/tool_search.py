"""Tool search: BM25 over the tool catalogue's names, descriptions and parameters."""
from __future__ import annotations

import math
import re
from collections import Counter


WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset("a an the of to and or for in on with by from is are be it as at this that "
                 "when use e g i me my please".split())


def _words(text: str) -> list[str]:
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ").lower()
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in WORD.findall(text)
            if w not in STOP]


def _document(tool: dict) -> list[str]:
    fn = tool["function"]
    params = " ".join(f"{k} {v.get('description', '')}" for k, v in
                      (fn.get("parameters") or {}).get("properties", {}).items())
    return _words(fn["name"]) * 2 + _words(fn.get("description", "")) + _words(params)


def search_tools(query: str, catalogue: list[dict], limit: int = 3,
                 k1: float = 1.2, b: float = 0.75) -> list[tuple[float, dict]]:
    """BM25 over each tool's name (counted twice), description and parameters: the best
    `limit` tools for `query`, best first, ties broken by name. Codex CLI's tool search is BM25
    too (the textbook, part 9)."""
    docs = [_document(t) for t in catalogue]
    n = len(docs)
    average = sum(map(len, docs)) / max(n, 1)
    frequency = Counter(w for d in docs for w in set(d))
    terms = set(_words(query))
    scored = []
    for tool, doc in zip(catalogue, docs):
        counts = Counter(doc)
        score = 0.0
        for term in terms:
            if counts[term]:
                idf = math.log(1 + (n - frequency[term] + 0.5) / (frequency[term] + 0.5))
                tf = counts[term]
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / average))
        if score > 0:
            scored.append((round(score, 3), tool))
    scored.sort(key=lambda pair: (-pair[0], pair[1]["function"]["name"]))
    return scored[:limit]
