"""Writing the gradebook: gradebook.csv (a row per student, lab and check, and per reflection),
gradebook.md (a score per lab, a total per student, what failed and why, the reflections) and
gradebook.json (everything, for `merge`)."""
from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from course import reflections
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


def write_gradebook(subs: list[Submission], labs: dict[str, dict], out: Path,
                    shard: str | None = None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    subs = sorted(subs, key=lambda s: (s.student, s.notebook))
    paths = [out / name for name in OUTPUT_FILES]
    with paths[0].open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for sub in subs:
            if sub.problem:
                writer.writerow({"student": sub.student, "notebook": sub.notebook, "lab": sub.lab,
                                 "check": "", "status": "not graded", "points": "", "earned": 0,
                                 "detail": sub.problem, "edition": sub.edition})
            writer.writerows({**r, "edition": sub.edition} for r in sub.rows)
            writer.writerows(reflection_rows(sub))
    paths[1].write_text(markdown(subs, labs), encoding="utf-8")
    data = {"format": FORMAT, "shard": shard, "labs": labs, "submissions": [asdict(s) for s in subs]}
    paths[2].write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return paths


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown(subs: list[Submission], labs: dict[str, dict]) -> str:
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
    lines = ["# Gradebook", "",
             f"{len(students)} students, {graded_count} lab notebooks graded{editions}, {broken} not graded. "
             f"The total counts every lab in this gradebook ({possible} points); a lab a student "
             f"did not hand in counts 0.{read}", "",
             "| student | " + " | ".join(lab_ids) + " | total |",
             "|---|" + "---|" * len(lab_ids) + "---|"]
    for name in students:
        cells = []
        for lab_id in lab_ids:
            theirs = [s for s in mine[name] if s.lab == lab_id]
            done = next((s for s in theirs if not s.problem), None)
            if done is None:
                cells.append("not graded" if theirs else "—")
            elif not done.attempted:
                cells.append("not attempted")
            else:
                cells.append(f"{done.earned} / {done.points}")
        earned = whole(sum(s.earned for s in mine[name] if not s.problem))
        lines.append(f"| {_cell(name)} | " + " | ".join(cells) + f" | {earned} / {possible} |")
    details = []
    for name in students:
        items = []
        for s in mine[name]:
            where = f"`{s.notebook}`" + (f", the {s.edition} edition" if s.edition not in ("", "en") else "")
            if s.problem:
                items.append(f"- {where}: not graded: {s.problem}")
                continue
            if s.lesson:
                continue  # in Reflections
            if not s.attempted:
                items.append(f"- {s.lab} ({where}): not attempted (every exercise is still the stub)")
                continue
            failed = [r for r in s.rows if r["status"] != "pass"]
            if not failed and not s.notes:
                continue
            items.append(f"- {s.lab} ({where}): {s.earned} / {s.points}")
            items += [f"  - note: {_cell(n)}" for n in s.notes]
            items += [f"  - ✗ {r['check']} ({r['status']}): {' — '.join(r['detail'].splitlines()) or 'failed'}"
                      for r in failed]
        if items:
            details += ["", f"### {name}", ""] + items
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
            items += ["", f"**{s.lesson}** (`{s.notebook}`): {answered} of {len(s.reflections)} answered", ""]
            items += [f"- note: {_cell(n)}" for n in s.notes]
            for r in s.reflections:
                number = r["key"].removeprefix("think-")
                items.append(f"{number}. {r['question'] or r['key']}")
                if r["status"] == reflections.ANSWERED:
                    items += ["", *("   > " + line if line.strip() else "   >"
                                    for line in r["answer"].splitlines()), ""]
                else:
                    items += ["", "   *not answered*", ""]
        if items:
            out += ["", f"### {name}"] + items
    return ["", "## Reflections", "",
            "Answers to the lessons' \"Things to think about\", for you to read; they score no "
            "points. The instructor's answer key is docs/instructors/answer_key.md."] + out if out else []
