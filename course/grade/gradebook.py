"""Writing the gradebook: gradebook.csv (a row per student, lab and check, and per reflection),
gradebook.md (a score per lab, a total per student, what failed and why, the reflections),
gradebook.json (everything, for `merge`) and feedback/<student>.md (`course.grade.feedback`).

What a student controls is capped once (`capped_submission`) and escaped for each file
(`course.grade.student_text`): gradebook.md is Markdown in which no student text can make a
heading, a row, a link or HTML; gradebook.csv is for a spreadsheet, so no field is read as a
formula."""
from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import asdict, replace
from pathlib import Path

from course import reflections
from course.grade.feedback import lab_score, failed_items, write_feedback
from course.grade.student_text import (ANSWER_LIMIT, DETAIL_LIMIT, NAME_LIMIT, capped, csv_field, md,
                                       md_code, md_quoted, visible)
from course.grade.submissions import OUTPUT_FILES, Submission
from course.labs import Lab, whole

CSV_FIELDS = ["student", "notebook", "lab", "check", "status", "points", "earned", "detail", "edition"]

FORMAT = "course-gradebook/1"


def reflection_rows(sub: Submission) -> list[dict]:
    """gradebook.csv's rows for a lesson's answers: no points, the answer as the detail."""
    return [{"student": sub.student, "notebook": sub.notebook, "lab": sub.lesson, "check": r["key"],
             "status": r["status"], "points": "", "earned": "", "detail": r["answer"],
             "edition": sub.edition} for r in sub.reflections]


def lab_info(labs: dict[str, Lab], subs: list[Submission]) -> dict[str, dict]:
    """Points, checks and a digest of every lab some submission was matched to."""
    info = {}
    for lab_id in sorted({s.lab for s in subs if s.lab}):
        lab = labs[lab_id]
        info[lab_id] = {"points": lab.points(),
                        "checks": [c.metadata["course"]["key"] for _, c in lab.checks()],
                        "sha256": hashlib.sha256(lab.path.read_bytes()).hexdigest()}
    return info


def _text(value, limit: int):
    return visible(capped(value, limit)) if isinstance(value, str) else value


def capped_submission(sub: Submission) -> Submission:
    """`sub` with every text in it capped (`DETAIL_LIMIT`, a reflection's answer `ANSWER_LIMIT`)
    and visible: what any gradebook file holds of a submission."""
    names = {"student": _text(sub.student, NAME_LIMIT), "notebook": _text(sub.notebook, NAME_LIMIT)}

    def cap(row: dict, long: tuple[str, ...] = ()) -> dict:
        return {k: names.get(k) or _text(v, ANSWER_LIMIT if k in long else DETAIL_LIMIT)
                for k, v in row.items()}
    return replace(sub, **names, lab=_text(sub.lab, NAME_LIMIT), lesson=_text(sub.lesson, NAME_LIMIT),
                   edition=_text(sub.edition, NAME_LIMIT), problem=_text(sub.problem, DETAIL_LIMIT),
                   notes=[_text(n, DETAIL_LIMIT) for n in sub.notes], rows=[cap(r) for r in sub.rows],
                   reflections=[cap(r, ("answer",)) for r in sub.reflections])


def write_gradebook(subs: list[Submission], labs: dict[str, dict], out: Path,
                    shard: str | None = None, skipped: list[str] = ()) -> list[Path]:
    """Write the gradebook's files into `out`; `skipped` names the folders collecting passed over
    as an earlier run's output (gradebook.md lists them)."""
    out.mkdir(parents=True, exist_ok=True)
    subs = sorted((capped_submission(s) for s in subs), key=lambda s: (s.student, s.notebook))
    skipped = sorted({_text(name, NAME_LIMIT) for name in skipped})
    paths = [out / name for name in OUTPUT_FILES]
    with paths[0].open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for sub in subs:
            rows = [{"student": sub.student, "notebook": sub.notebook, "lab": sub.lab, "check": "",
                     "status": "not graded", "points": "", "earned": 0, "detail": sub.problem,
                     "edition": sub.edition}] if sub.problem else []
            rows += [{**r, "edition": sub.edition} for r in sub.rows] + reflection_rows(sub)
            writer.writerows({k: csv_field(v) for k, v in r.items()} for r in rows)
    paths[1].write_text(markdown(subs, labs, skipped), encoding="utf-8")
    data = {"format": FORMAT, "shard": shard, "labs": labs, "skipped": skipped,
            "submissions": [asdict(s) for s in subs]}
    paths[2].write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return paths + [write_feedback(subs, labs, out)]


def markdown(subs: list[Submission], labs: dict[str, dict], skipped: list[str] = ()) -> str:
    """gradebook.md: a table (a score per lab and a total per student), then what went wrong."""
    lab_ids = sorted(labs)
    possible = whole(sum(labs[i]["points"] for i in lab_ids))
    students = sorted({s.student for s in subs})
    mine = {name: [s for s in subs if s.student == name] for name in students}
    graded_count = sum(1 for s in subs if s.lab and not s.problem)
    broken = sum(1 for s in subs if s.problem)
    lessons = [s for s in subs if s.lesson and not s.problem]
    chinese = sum(1 for s in subs if s.lab and not s.problem and s.edition not in ("", "en"))
    editions = f" ({chinese} of them the Chinese edition, zh-CN)" if chinese else ""
    read = (f" {len(lessons)} lesson notebooks hold reflections, not graded: see Reflections at the "
            f"end." if lessons else "")
    passed_over = (f" Passed over as an earlier run's output (a gradebook and no notebook of its "
                   f"own): {', '.join(md_code(name) for name in skipped)}." if skipped else "")
    lines = ["# Gradebook", "",
             f"{len(students)} students, {graded_count} lab notebooks graded{editions}, {broken} not graded. "
             f"The total counts every lab in this gradebook ({possible} points); a lab a student "
             f"did not hand in counts 0.{read}{passed_over}", "",
             "| student | " + " | ".join(md(i) for i in lab_ids) + " | total |",
             "|---|" + "---|" * len(lab_ids) + "---|"]
    for name in students:
        cells = [lab_score([s for s in mine[name] if s.lab == lab_id]) for lab_id in lab_ids]
        earned = whole(sum(s.earned for s in mine[name] if not s.problem))
        lines.append(f"| {md(name)} | " + " | ".join(cells) + f" | {earned} / {possible} |")
    details = []
    for name in students:
        items = []
        for s in mine[name]:
            if s.lesson and not s.problem:
                continue  # in Reflections
            failed = failed_items(s)
            if failed:
                items += failed
        if items:
            details += ["", f"### {md(name)}", ""] + items
    if details:
        lines += ["", "## What failed, and why"] + details
    lines += reflections_markdown(students, mine)
    return "\n".join(lines).rstrip("\n") + "\n"


def reflections_markdown(students: list[str], mine: dict[str, list[Submission]]) -> list[str]:
    """gradebook.md's Reflections: per student and lesson, each question and the answer."""
    out = []
    for name in students:
        items = []
        for s in (s for s in mine[name] if s.lesson and not s.problem):
            answered = sum(r["status"] == reflections.ANSWERED for r in s.reflections)
            items += ["", f"**{md(s.lesson)}** ({md_code(s.notebook)}): {answered} of "
                          f"{len(s.reflections)} answered", ""]
            items += [f"- note: {md(n)}" for n in s.notes]
            for r in s.reflections:
                number = r["key"].removeprefix("think-")  # the student's copy may add any key
                asked = md(r["question"] or r["key"])
                items.append(f"{number}. {asked}" if number.isdigit() else f"- {asked}")
                if r["status"] == reflections.ANSWERED:
                    items += ["", *md_quoted(r["answer"]), ""]
                else:
                    items += ["", "   *not answered*", ""]
        if items:
            out += ["", f"### {md(name)}"] + items
    return ["", "## Reflections", "",
            "Answers to the lessons' \"Things to think about\", for you to read; they score no "
            "points. The instructor's answer key is docs/instructors/answer_key.md."] + out if out else []
