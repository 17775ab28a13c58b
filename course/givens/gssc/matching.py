"""The terms a text is matched on, and the share of wanted terms found (`overlap`).

Works for Chinese as well as English: CJK text has no spaces, so character pairs are terms.
Lab 03 asks for `relevance` (in the answers, `solutions.gssc.matching`), built from these;
chapter 06's notes search with the same terms.
"""
from __future__ import annotations

import re
import sys
from functools import lru_cache
from typing import AbstractSet

from course.givens.gssc.constants import CJK_QUESTION_WORDS, STOPWORDS

# Hiragana, Katakana, CJK ideographs (with extension A and compatibility), Hangul.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_WORDS = re.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+)")
_CHUNKS = re.compile(r"\w+")  # letters, digits, "_" and CJK: split further by _WORDS
# A query's CJK run is split at the Chinese question and filler words.
_CJK_QUESTION = re.compile("|".join(CJK_QUESTION_WORDS))


def _bigrams(run: str) -> list[str]:
    return [run[i:i + 2] for i in range(len(run) - 1)]


def terms(text: str) -> set[str]:
    """The terms relevance is computed on.

    Latin-script text: lower-cased words and numbers (split at anything else, so
    `ZLIB_LIBRARY` gives `zlib` and `library`), minus a few function words.
    CJK text has no spaces between words, so every pair of neighbouring characters (a
    bigram) is a term, and every single character too (so a one-character query can match).

    Terms are interned (`sys.intern`): 100k packets then share one string per distinct term
    instead of holding their own copies, and matching a query term is an identity check on
    memory that stays in the cache (issue 35: at 100k packets, copies made each packet's
    match several times slower than at 1k).
    """
    found: set[str] = set()
    for chunk in set(_CHUNKS.findall(text.casefold())):
        if chunk.isascii():  # the common case, kept fast: only "_" can still split it
            found.update(chunk.split("_"))
            continue
        for cjk, word in _WORDS.findall(chunk):
            if word:
                found.add(word)
            else:
                found.update(cjk)
                found.update(_bigrams(cjk))
    found.discard("")
    return set(map(sys.intern, found - STOPWORDS))


@lru_cache(maxsize=256)
def query_terms(query: str) -> frozenset:
    """The query's terms: like `terms`, but a CJK run of two or more characters counts only by
    its bigrams (single characters would match nearly every Chinese text), and question words
    such as 为什么 / 怎么 are left out."""
    found: set[str] = set()
    for cjk, word in _WORDS.findall(query.casefold()):
        if word:
            if word not in STOPWORDS:
                found.add(word)
        elif len(cjk) == 1:
            found.add(cjk)
        else:
            for piece in _CJK_QUESTION.split(cjk):
                found.update(_bigrams(piece))  # a piece left with one character adds nothing
    return frozenset(map(sys.intern, found))  # the same string objects as the texts' terms


def overlap(wanted: frozenset, found: AbstractSet[str]) -> float:
    """Share of the wanted terms that were found: 0.0 (none) to 1.0 (all)."""
    return len(wanted & found) / len(wanted) if wanted else 0.0

