"""Chapter 03's givens: what lab 03 hands the student and the answers build on, no answer among
them (lab 03 asks for `relevance`, `select`, `structure` and `candidate_budget`).

    constants  the six SECTIONS, where packets go, DEFAULT_OUTPUT, STOPWORDS, CJK_QUESTION_WORDS
    config     ContextConfig (budget, reserve, weights) and BudgetError
    matching   terms, query_terms and overlap, which relevance is built from
    packets    Packet (its exact tokens and terms counted once), loading them, the sample data
"""
from course.givens.gssc.config import ContextConfig
from course.givens.gssc.constants import CJK_QUESTION_WORDS, DEFAULT_OUTPUT, SECTIONS, STOPWORDS
from course.givens.gssc.packets import Packet, as_datetime, sample_candidates, sample_tasks

__all__ = [
    "CJK_QUESTION_WORDS", "ContextConfig", "DEFAULT_OUTPUT", "Packet", "SECTIONS", "STOPWORDS",
    "as_datetime", "sample_candidates", "sample_tasks",
]
