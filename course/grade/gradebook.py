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
from course.grade.capstone import CAPSTONE_CHECK, capstone_score, leaderboard_markdown, summary
from course.grade.feedback import failed_items, lab_score, rubric_line, write_feedback
from course.grade.student_text import (ANSWER_LIMIT, DETAIL_LIMIT, NAME_LIMIT, capped, csv_field, md,
                                       md_code, md_quoted, visible)
from course.grade.roster import NOT_HANDED_IN, Person, absent, as_records, unmatched
from course.grade.submissions import OUTPUT_FILES, Submission
from course.labs import Lab, whole

CSV_FIELDS = ["student", "notebook", "lab", "check", "status", "points", "earned", "detail", "edition"]

FORMAT = "course-gradebook/1"
LATE_CHECK = "late penalty"  # gradebook.csv's row of a late lab's penalty


def capstone_rows(sub: Submission) -> list[dict]:
    """gradebook.csv's row for the capstone lab's hidden-set run: no points (not in the total),
    the hidden-set score as `earned`, its totals (or why it was not scored) as the detail."""
    if not sub.capstone or sub.problem:
        return []
    return [{"student": sub.student, "notebook": sub.notebook, "lab": sub.lab, "check": CAPSTONE_CHECK,
             "status": "scored" if "hidden" in sub.capstone else "not scored", "points": "",
             "earned": capstone_score(sub.capstone), "detail": summary(sub.capstone), "edition": sub.edition}]


def reflection_rows(sub: Submission) -> list[dict]:
    """gradebook.csv's rows for a lesson's answers: no points, the answer as the detail."""
    return [{"student": sub.student, "notebook": sub.notebook, "lab": sub.lesson, "check": r["key"],
             "status": r["status"], "points": r.get("out_of", ""), "earned": r.get("score", ""),
             "detail": r["answer"], "edition": sub.edition} for r in sub.reflections]


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


def late_row(sub: Submission) -> list[dict]:
    """gradebook.csv's row for a late lab: its penalty as negative points earned, and why."""
    if not sub.late:
        return []
    return [{"student": sub.student, "notebook": sub.notebook, "lab": sub.lab, "check": LATE_CHECK,
             "status": "late", "points": "", "earned": whole(-sub.penalty), "detail": sub.late["why"],
             "edition": sub.edition}]


def write_gradebook(subs: list[Submission], labs: dict[str, dict], out: Path,
                    shard: str | None = None, skipped: list[str] = (),
                    roster: list[Person] = (), rubric: list[dict] = (),
                    capstone: dict | None = None) -> list[Path]:
    """Write the gradebook's files into `out`; `skipped` names the folders collecting passed over
    as an earlier run's output (gradebook.md lists them); `roster` (`course.grade.roster`) gives
    every student on it a row, handed in or not; `rubric` (`course.grade.rubric.rubric_worth`) the
    reflection questions scored, and what each is worth; `capstone` the capstone's baselines
    (`course.grade.capstone.grade_capstones`), when the capstone lab was graded."""
    out.mkdir(parents=True, exist_ok=True)
    subs = sorted((capped_submission(s) for s in subs), key=lambda s: (s.student, s.notebook))
    skipped = sorted({_text(name, NAME_LIMIT) for name in skipped})
    roster = list(roster)
    paths = [out / name for name in OUTPUT_FILES]
    with paths[0].open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for person in absent(roster, {s.student for s in subs}):
            writer.writerow({k: csv_field(v) for k, v in {
                "student": person.folder, "notebook": "", "lab": "", "check": "", "status": NOT_HANDED_IN,
                "points": "", "earned": 0, "detail": "", "edition": ""}.items()})
        for sub in subs:
            rows = [{"student": sub.student, "notebook": sub.notebook, "lab": sub.lab, "check": "",
                     "status": "not graded", "points": "", "earned": 0, "detail": sub.problem,
                     "edition": sub.edition}] if sub.problem else []
            rows += [{**r, "edition": sub.edition} for r in sub.rows] + late_row(sub) + reflection_rows(sub)
            rows += capstone_rows(sub)
            writer.writerows({k: csv_field(v) for k, v in r.items()} for r in rows)
    rubric = list(rubric)
    paths[1].write_text(markdown(subs, labs, skipped, roster, rubric, capstone), encoding="utf-8")
    data = {"format": FORMAT, "shard": shard, "labs": labs, "skipped": skipped,
            "roster": as_records(roster), "rubric": rubric, "capstone": capstone,
            "submissions": [asdict(s) for s in subs]}
    paths[2].write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return paths + [write_feedback(subs, labs, out, tuple(p.folder for p in roster), rubric, capstone)]


def markdown(subs: list[Submission], labs: dict[str, dict], skipped: list[str] = (),
             roster: list[Person] = (), rubric: list[dict] = (), capstone: dict | None = None) -> str:
    """gradebook.md: a table (a score per lab and a total per student), then what went wrong,
    the late work, the overrides and, with a roster, who is missing from it or from the class;
    the capstone's leaderboard when the capstone lab was graded."""
    lab_ids = sorted(labs)
    scored = whole(sum(q["out_of"] for q in rubric))
    possible = whole(sum(labs[i]["points"] for i in lab_ids) + scored)
    scored_too = " and the reflections scored with a rubric" if rubric else ""
    handed_in = {s.student for s in subs}
    students = sorted(handed_in | {p.folder for p in roster})
    names = {p.folder: p for p in roster}
    missing = NOT_HANDED_IN if roster else "—"
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
             f"The total counts every lab in this gradebook{scored_too} ({possible} points); a lab a student "
             f"did not hand in counts 0.{read}{passed_over}", "",
             "| student | " + ("name | " if roster else "") + " | ".join(md(i) for i in lab_ids)
             + (" | reflections" if rubric else "") + " | total |",
             "|---|" + "---|" * (len(lab_ids) + bool(roster) + bool(rubric)) + "---|"]
    for name in students:
        cells = [lab_score([s for s in mine[name] if s.lab == lab_id], missing) for lab_id in lab_ids]
        if rubric:
            cells.append(f"{whole(sum(s.earned for s in mine[name] if s.lesson and not s.problem))} / {scored}")
        earned = whole(sum(s.final for s in mine[name] if not s.problem))
        who = (f"{md(names[name].name)} ({md(names[name].student_id)}) | " if name in names else
               "*not on the roster* | ") if roster else ""
        lines.append(f"| {md(name)} | {who}" + " | ".join(cells) + f" | {earned} / {possible} |")
    if roster:
        away = absent(roster, handed_in)
        strangers = unmatched(roster, handed_in)
        lines += ["", f"Roster: {len(roster)} students, {len(away)} handed in nothing"
                  + (f" ({', '.join(md(p.folder) for p in away)})" if away else "") + "."]
        if strangers:
            lines += ["", "## Not on the roster", "",
                      "These folders hold work that matches no roster line (a misspelt folder? a "
                      "student missing from the roster?): graded, but nobody's until you add them.", ""]
            lines += [f"- {md_code(name)}: {', '.join(md_code(s.notebook) for s in mine[name])}"
                      for name in strangers]
    lines += leaderboard_markdown(subs, capstone) + late_markdown(subs) + overrides_markdown(subs)
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
    lines += reflections_markdown(students, mine, bool(rubric))
    return "\n".join(lines).rstrip("\n") + "\n"


def late_markdown(subs: list[Submission]) -> list[str]:
    """gradebook.md's Late work: each late lab's raw score, penalty and final score, and why."""
    late = [s for s in subs if s.late]
    if not late:
        return []
    return ["", "## Late work", "", "| student | lab | raw | penalty | final | why |", "|---|---|---|---|---|---|"] + [
        f"| {md(s.student)} | {md(s.lab)} | {s.earned} / {s.points} | −{s.penalty} | {s.final} / {s.points} "
        f"| {md(s.late['why'])} |" for s in late]


def overrides_markdown(subs: list[Submission]) -> list[str]:
    """gradebook.md's Overrides: each check the instructor overrode, what grading said, and why."""
    rows = [(s, o) for s in subs for o in s.overrides]
    if not rows:
        return []
    return ["", "## Overrides", "", "| student | lab | check | graded | now | reason |",
            "|---|---|---|---|---|---|"] + [
        f"| {md(s.student)} | {md(s.lab)} | {md(o['check'])} | {md(o['was'])} | {md(o['now'])} | {md(o['reason'])} |"
        for s, o in rows]


def reflections_markdown(students: list[str], mine: dict[str, list[Submission]], scored: bool = False) -> list[str]:
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
                if "score" in r:
                    items += [f"   {rubric_line(r)}", ""]
        if items:
            out += ["", f"### {md(name)}"] + items
    return ["", "## Reflections", "",
            "Answers to the lessons' \"Things to think about\", for you to read"
            + ("; those scored in --rubric-scores count in the total. " if scored else "; they score no points. ")
            + "The instructor's answer key is docs/instructors/answer_key.md."] + out if out else []

