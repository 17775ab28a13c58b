"""Reflections scored with a rubric (`--rubric-scores scores.csv`): the lessons' "Things to think
about" answers, which grading collects for reading, earn the points the instructor gives them in
a sheet, with a comment; the gradebook adds them to the total and the feedback shows each score
and comment.

scores.csv has the columns `student`, `lesson` (the lesson's id, `01_agent_loop`), `question`
(the answer cell's key, `think-1`, as gradebook.csv's check column names it), `points`, `out_of`
(what the question is worth: the same on every row of that question) and `comment` (optional),
and may name the `rubric` line the answer matched (shown with the score)."""
from __future__ import annotations

from pathlib import Path

from course.grade.sheets import SheetError, read_sheet, where
from course.labs import whole

COLUMNS = ("student", "lesson", "question", "points", "out_of")


def _number(text: str, what: str) -> int | float:
    try:
        value = whole(float(text))
    except ValueError:
        raise SheetError(f"{what} {text!r} is not a number") from None
    if value < 0:
        raise SheetError(f"{what} {text!r} is negative")
    return value


def read_rubric_scores(path: Path) -> tuple[list[dict], dict[tuple[str, str], int | float]]:
    """(scores, worth): each row checked (numbers, points within out_of, one row per student and
    question), and what each (lesson, question) is worth."""
    scores, worth, seen = [], {}, {}
    for row in read_sheet(path, COLUMNS, ("comment", "rubric")):
        here = where(path, row)
        try:
            points, out_of = _number(row["points"], "points"), _number(row["out_of"], "out_of")
        except SheetError as exc:
            raise SheetError(f"{here}: {exc}") from None
        if points > out_of:
            raise SheetError(f"{here}: points {points} is more than out_of {out_of}")
        question = (row["lesson"], row["question"])
        if worth.setdefault(question, out_of) != out_of:
            raise SheetError(f"{here}: {row['lesson']} {row['question']} is out of {worth[question]} on an "
                             f"earlier line, {out_of} here")
        key = (row["student"], *question)
        if key in seen:
            raise SheetError(f"{here}: {row['student']}'s {row['question']} is also scored on line {seen[key]}")
        seen[key] = row["line"]
        scores.append({"student": row["student"], "lesson": row["lesson"], "question": row["question"],
                       "points": points, "out_of": out_of, "comment": row.get("comment", ""),
                       "rubric": row.get("rubric", ""), "line": row["line"]})
    return scores, worth


def unknown_answers(scores: list[dict], subs, path: Path) -> None:
    """SheetError for a score of a question no collected copy of that student's lesson holds."""
    have = {(s.student, s.lesson, r["key"]) for s in subs if s.lesson and not s.problem for r in s.reflections}
    for score in scores:
        if (score["student"], score["lesson"], score["question"]) not in have:
            raise SheetError(f"{path}, line {score['line']}: no collected copy of {score['lesson']} from "
                             f"{score['student']!r} has the question {score['question']!r}")


def apply_rubric(subs, scores: list[dict]) -> None:
    """Put each score (points, out of, comment, rubric line) on the reflection it scores."""
    by_key = {(s["student"], s["lesson"], s["question"]): s for s in scores}
    for sub in subs:
        if not sub.lesson or sub.problem:
            continue
        for r in sub.reflections:
            score = by_key.get((sub.student, sub.lesson, r["key"]))
            if score:
                r.update(score=score["points"], out_of=score["out_of"], comment=score["comment"],
                         rubric=score["rubric"])


def rubric_worth(worth: dict[tuple[str, str], int | float]) -> list[dict]:
    """gradebook.json's record of the scored questions."""
    return [{"lesson": lesson, "question": question, "out_of": out_of}
            for (lesson, question), out_of in sorted(worth.items())]
