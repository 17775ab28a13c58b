"""score_answer: is an answer to a recall question right? And the table per strategy and kind.

Judged by code on the answer's text, never by the model that answered:

- an `abstain` question (nothing in the history answers it) is right only when the answer says
  it does not know ("I don't know", "不知道");
- any other question is right when the answer contains every expected value (an aggregate: all
  of them) and no stale one (a knowledge update: the old value is wrong now); an "I don't know"
  there is wrong, however honest.

Matching ignores case, full-width forms and runs of spaces (NFKC, casefold), so "ＶＩＭ" is "vim".
A value is found as a whole word where it is Latin-script ("Rome" is not in "Romeo"), as a
substring where it is Chinese (which has no spaces between words).
"""
from __future__ import annotations

import re
import unicodedata
from collections import defaultdict

from course.givens.memory import IDK_FORMS, RecallQuestion
from solutions.evaluation import wilson


def normal(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().replace("’", "'").split())


def contains(answer: str, value: str) -> bool:
    answer, value = normal(answer), normal(value)
    if not value:
        return False
    if value.isascii():
        return re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", answer) is not None
    return value in answer


def says_idk(answer: str) -> bool:
    return any(form in normal(answer) for form in IDK_FORMS)


def score_answer(question: RecallQuestion, answer: str) -> bool:
    """True when `answer` is right for `question` (the rules in the module's docstring)."""
    if not isinstance(answer, str):
        return False
    if question.kind == "abstain":
        return says_idk(answer)
    if says_idk(answer):
        return False
    return all(contains(answer, v) for v in question.answers) \
        and not any(contains(answer, v) for v in question.stale)


def recall_table(rows, level: float = 0.95) -> dict:
    """{(strategy, kind): {"n", "successes", "rate", "low", "high", "tokens"}} from result rows
    with "strategy", "kind", "success" and "prompt_tokens" (tokens: the mean per answer)."""
    groups = defaultdict(list)
    for row in rows:
        groups[(row["strategy"], row["kind"])].append(row)
    table = {}
    for key, group in sorted(groups.items()):
        n, wins = len(group), sum(bool(r["success"]) for r in group)
        low, high = wilson(wins, n, level)
        table[key] = {"n": n, "successes": wins, "rate": wins / n, "low": low, "high": high,
                      "tokens": sum(r.get("prompt_tokens", 0) for r in group) / n}
    return table
