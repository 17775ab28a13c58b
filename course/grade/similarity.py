"""Similarity (`--similarity`): per lab, the pairs of submissions whose exercise code is unusually
alike, with the lines they share, in similarity.md beside the gradebook. Evidence for a
conversation with the students, never a penalty: nothing here touches a score.

The comparison is copydetect's (winnowing, as MOSS does: k-grams of the code's tokens with
names and strings normalised, so renaming variables does not hide a copy), over each
submission's exercise cells only; the released stub code is its boilerplate, so two students
who both kept a stub's lines are not alike for it."""
from __future__ import annotations

import io
from itertools import combinations
from pathlib import Path

from course.grade.student_text import md, md_block, md_code
from course.labs import Lab, cell_key, read_notebook
from course.labs.variants import student_answers

NOISE = 25        # tokens: shorter runs in common are not counted (copydetect's default noise threshold)
GUARANTEE = 30    # tokens: every shared run this long is found (copydetect's default)
DEFAULT_THRESHOLD = 0.6
REPORT = "similarity.md"


def _fingerprint(code: str, boilerplate=()):
    from copydetect import CodeFingerprint  # imported here: grading without --similarity never needs it

    return CodeFingerprint("exercises.py", NOISE, GUARANTEE - NOISE + 1, boilerplate=list(boilerplate),
                           fp=io.StringIO(code))


def exercise_code(lab: Lab, nb) -> str:
    """A notebook's exercise cells (the released lab's keys, in its order), joined."""
    answers = student_answers(nb)
    return "\n\n".join(answers.get(cell_key(c), "") for _, c in lab.exercises())


def shared_lines(code: str, slices) -> list[str]:
    """The lines of `code` that the copied slices (character offsets) touch, in order."""
    starts = [0]
    for i, ch in enumerate(code):
        if ch == "\n":
            starts.append(i + 1)
    touched = set()
    for start, end in zip(*slices):
        first = max(i for i, s in enumerate(starts) if s <= start)
        last = max(i for i, s in enumerate(starts) if s <= max(start, end - 1))
        touched.update(range(first, last + 1))
    lines = code.split("\n")
    return [lines[i] for i in sorted(touched) if i < len(lines) and lines[i].strip()]


def similar_pairs(subs, root: Path, labs: dict[str, Lab], threshold: float) -> list[dict]:
    """Each pair of graded submissions of one lab whose exercise code is at least `threshold`
    alike (copydetect's share of either one's tokens found in the other), most alike first."""
    from copydetect import compare_files

    found = []
    for lab_id in sorted({s.lab for s in subs if s.lab and not s.problem and s.attempted}):
        lab = labs[lab_id]
        stub = _fingerprint(exercise_code(lab, lab.notebook))
        prints = []
        for sub in sorted((s for s in subs if s.lab == lab_id and not s.problem and s.attempted),
                          key=lambda s: s.student):
            try:
                code = exercise_code(lab, read_notebook(root / sub.notebook))
            except Exception:  # graded already; a notebook that cannot be read again is left out
                continue
            prints.append((sub, code, _fingerprint(code, stub.hashes)))
        for (a, code_a, fa), (b, _, fb) in combinations(prints, 2):
            overlap, (sim_a, sim_b), slices = compare_files(fa, fb)
            score = max(sim_a, sim_b)
            if overlap and score >= threshold:
                found.append({"lab": lab_id, "a": a.student, "b": b.student, "score": round(float(score), 2),
                              "a_share": round(float(sim_a), 2), "b_share": round(float(sim_b), 2),
                              "lines": shared_lines(code_a, slices[0])})
    return sorted(found, key=lambda p: (p["lab"], -p["score"], p["a"], p["b"]))


def write_report(pairs: list[dict], threshold: float, out: Path) -> Path:
    lines = ["# Similar submissions", "",
             f"Pairs of submissions of one lab whose exercise code is at least {threshold:.0%} alike "
             f"(copydetect's winnowing over the exercise cells, the released stubs left out). This is "
             f"evidence for a conversation with the students, not a verdict: it changes no score.", ""]
    if not pairs:
        lines.append("No pair reached the threshold.")
    for p in pairs:
        lines += [f"## {md(p['lab'])}: {md_code(p['a'])} and {md_code(p['b'])}, {p['score']:.0%} alike", "",
                  f"{p['a_share']:.0%} of {md_code(p['a'])}'s code is found in {md_code(p['b'])}'s, "
                  f"{p['b_share']:.0%} the other way. The lines of {md_code(p['a'])}'s they share:", "",
                  *md_block("\n".join(p["lines"])), ""]
    path = out / REPORT
    path.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    return path
