"""What goes back to each student: feedback/<student>.md beside the gradebook (their score per
lab, each failed check's reason, the notes on their notebooks), and their graded notebooks
(graded-notebooks/<student>/<lab>.ipynb) showing under each check the verdict the gradebook
holds, ✓ or ✗ with the reason, and under each exercise the code that was graded.

Both are written from the gradebook's own records, with everything the student controls
escaped: Markdown through `course.grade.student_text.md`, notebook outputs as plain text with
control characters spelt out (a carriage return cannot redraw a ✗ as a ✓)."""
from __future__ import annotations

import hashlib
from pathlib import Path

import nbformat

from course import reflections
from course.grade.capstone import feedback_markdown
from course.grade.student_text import ANSWER_LIMIT, DETAIL_LIMIT, capped, md, md_code, visible
from course.grade.submissions import Submission, fresh_output_folder
from course.labs import cell_key, cell_kind, whole

FEEDBACK_DIR = "feedback"


def lab_score(theirs: list[Submission], missing: str = "—") -> str:
    """A student's score in one lab from their submissions of it: "2 / 3" (its final score,
    "2 / 3 late" when it was handed in late), "not attempted", "not graded" or `missing` (none
    handed in: "—", or "not handed in" for a student on the roster)."""
    done = next((s for s in theirs if not s.problem), None)
    if done is None:
        return "not graded" if theirs else missing
    if not done.attempted:
        return "not attempted"
    return f"{done.final} / {done.points}" + (" late" if done.late else "")


def failed_items(sub: Submission) -> list[str]:
    """Markdown list items for what went wrong with one submission (none when nothing did): the
    reason it was not graded, or its score, notes and each failed check with its reason."""
    where = md_code(sub.notebook) + (f", the {md(sub.edition)} edition" if sub.edition not in ("", "en") else "")
    if sub.problem:
        return [f"- {where}: not graded: {md(sub.problem)}"]
    notes = [f"  - note: {md(n)}" for n in sub.notes]
    if sub.lesson:
        return []
    if not sub.attempted:
        return [f"- {md(sub.lab)} ({where}): not attempted (every exercise is still the stub)", *notes]
    failed = [r for r in sub.rows if r["status"] != "pass"]
    late = [f"  - late: {md(sub.late['why'])}: {sub.earned} − {sub.penalty} = {sub.final} / {sub.points}"] \
        if sub.late else []
    changed = [f"  - override of {md(o['check'])}: {md(o['was'])} → {md(o['now'])}: {md(o['reason'])}"
               for o in sub.overrides]
    failed = [r for r in failed if r["check"] not in {o["check"] for o in sub.overrides}]
    if not failed and not notes and not late and not changed:
        return []
    return [f"- {md(sub.lab)} ({where}): {sub.final} / {sub.points}", *notes, *late, *changed,
            *(f"  - ✗ {md(r['check'])} ({md(r['status'])}): {md(r['detail']) or 'failed'}" for r in failed)]


def rubric_line(r: dict) -> str:
    """A reflection's rubric score, in Markdown: "**score: 2 / 3** (rubric: …): comment"."""
    rubric = f" (rubric: {md(r['rubric'])})" if r.get("rubric") else ""
    comment = f": {md(r['comment'])}" if r.get("comment") else ""
    return f"**score: {r['score']} / {r['out_of']}**{rubric}{comment}"


def feedback_file(student: str) -> str:
    """The feedback file's name for a student: their name, or, when it is too long for a file
    name, its start and a digest (two students never share one)."""
    if len(student.encode("utf-8")) <= 120:
        return f"{student}.md"
    return f"{student[:40]}-{hashlib.sha256(student.encode('utf-8')).hexdigest()[:12]}.md"


def write_feedback(subs: list[Submission], labs: dict[str, dict], out: Path,
                   roster_folders: tuple[str, ...] = (), rubric: list[dict] = (),
                   capstone: dict | None = None) -> Path:
    """feedback/<student>.md for every student in `subs` and every folder of the roster
    (`roster_folders`; capped already: the gradebook's); `capstone`, the baselines' rows, beside
    a student's capstone totals (`course.grade.capstone.feedback_markdown`)."""
    folder = fresh_output_folder(out / FEEDBACK_DIR)
    lab_ids = sorted(labs)
    possible = whole(sum(labs[i]["points"] for i in lab_ids) + sum(q["out_of"] for q in rubric))
    missing = "not handed in" if roster_folders else "—"
    for student in sorted({s.student for s in subs} | set(roster_folders)):
        mine = [s for s in subs if s.student == student]
        earned = whole(sum(s.final for s in mine if not s.problem))
        lines = [f"# Feedback for {md(student)}", "",
                 f"Your total: **{earned} / {possible}** points, over the labs graded in this class "
                 f"(a lab you did not hand in counts 0).", ""]
        if lab_ids:
            lines += ["| lab | your score |", "|---|---|"]
            lines += [f"| {md(i)} | {lab_score([s for s in mine if s.lab == i], missing)} |" for i in lab_ids]
        items = [item for s in mine for item in failed_items(s)]
        if items:
            lines += ["", "## What failed, and why (and notes on your notebooks)", "", *items]
        graded = [s for s in mine if s.lab and not s.problem and s.attempted]
        if graded and all(r["status"] == "pass" for s in mine for r in s.rows) \
                and not any(s.problem for s in mine):
            lines += ["", "Every check of the labs you handed in passed."]
        for s in mine:
            if s.capstone and not s.problem:
                lines += feedback_markdown(s.capstone, capstone)
        lessons = [s for s in mine if s.lesson and not s.problem]
        if lessons:
            lines += ["", "## Your reflections", "",
                      "Scored by your instructor with a rubric." if rubric else
                      "Collected for your instructor to read; they score no points.", ""]
            for s in lessons:
                lines.append(f"- {md(s.lesson)} ({md_code(s.notebook)}): "
                             f"{sum(r['status'] == reflections.ANSWERED for r in s.reflections)} of "
                             f"{len(s.reflections)} questions answered")
                lines += [f"  - {md(r['key'])}: {rubric_line(r)}" for r in s.reflections if "score" in r]
        (folder / feedback_file(student)).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def show_verdicts(copy: Path, sub: Submission, exercises: dict[str, str] | None) -> None:
    """Rewrite a kept graded copy (the answer key with the student's cells in, so ✓ under every
    check) to show the gradebook's verdicts: ✓ under a passed check, ✗ with the reason under
    any other; `exercises` (key -> the source graded in the worker) is shown under each
    exercise cell, which in the copy only binds the worker's names."""
    nb = nbformat.read(copy, as_version=4)
    verdicts = {r["check"]: r for r in sub.rows}
    for cell in nb.cells:
        kind, key = cell_kind(cell), cell_key(cell)
        if kind == "check":
            verdict = verdicts.get(key)
            if verdict and verdict["status"] == "pass":
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"✓ {key}\n")]
            else:
                status, why = ((verdict["status"], verdict["detail"]) if verdict else
                               ("not graded", sub.problem or "no verdict was reported for this check"))
                cell.outputs = [nbformat.v4.new_output("stream", name="stderr",
                                                       text=f"✗ {key} ({status}): {_plain(why)}\n")]
        elif kind == "exercise" and exercises is not None and key in exercises:
            cell.outputs = [nbformat.v4.new_output(
                "stream", name="stdout", text="The code graded for this exercise (it ran in the grader's "
                                              "worker, not in this notebook):\n\n"
                                              + _plain(exercises[key], ANSWER_LIMIT) + "\n")]
    notes = "".join(f"\n- note: {md(n)}" for n in sub.notes)
    notes += "".join(f"\n- override of {md(o['check'])}: {md(o['was'])} → {md(o['now'])}: {md(o['reason'])}"
                     for o in sub.overrides)
    late = (f" Late: {md(sub.late['why'])}: {sub.earned} − {sub.penalty} = **{sub.final} / {sub.points}**."
            if sub.late else "")
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(
        f"**Graded: {sub.earned} / {sub.points} points** in {md(sub.lab)}.{late} Under each check is the "
        f"gradebook's verdict: ✓ passed, or ✗ with the reason.{notes}"))
    nbformat.write(nb, copy)


def _plain(text: str, limit: int = DETAIL_LIMIT) -> str:
    return visible(capped(text, limit))
