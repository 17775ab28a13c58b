"""What each step of the term costs for a class (issue 52): collect, grade (with the roster, deadlines,
late policy and overrides), the similarity report, the exports and giving back. Prints seconds per
step; asserts nothing.

    python benchmarks/bench_term.py [--students 30] [--jobs 2]

The class is `--students` copies of the tests' tiny lab (no model; its checks take a second a
notebook), a third of them late, each with its own code and one planted copy, so the figures are
the term's machinery plus grading's per-notebook cost (a fresh kernel each); a real lab's
notebooks take longer to grade, the other steps do not.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import course.collect  # noqa: E402
import course.grade  # noqa: E402
from tests.labs.conftest import SOLUTION, TINY_LAB, tiny_lab_notebook  # noqa: E402
from course.labs import cell_key, cell_kind  # noqa: E402

DEADLINE = 1790000000  # 2026-09-21, as a Unix time


def build(base: Path, students: int) -> tuple[Path, Path]:
    labs = base / "labs"
    labs.mkdir()
    nbformat.write(tiny_lab_notebook(), labs / f"{TINY_LAB}.ipynb")
    (labs / "tiny_solution.py").write_text(SOLUTION, encoding="utf-8")
    homes = base / "homes"
    roster = ["student_id,name,email,folder"]
    for i in range(students):
        name = f"s{i:03d}"
        roster.append(f"{i},Student {i},{name}@example.edu,{name}")
        nb = nbformat.read(labs / f"{TINY_LAB}.ipynb", as_version=4)
        for cell in nb.cells:
            if cell_kind(cell) == "exercise":
                key = cell_key(cell)
                offset = 0 if i == 1 else i  # s001 is a copy of s000
                cell.source = (f"def add(a, b):\n    base_{offset} = {offset}\n    return a + b + base_{offset} - {offset}"
                               if key == "add" else
                               f"def shout(text):\n    extra_{offset} = '!' * {1 + offset % 3}\n"
                               f"    return text.upper() + extra_{offset}[:1]")
        path = homes / name / "labs" / f"{TINY_LAB}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
        saved = DEADLINE + (86400 * 1.5 if i % 3 == 0 else -3600)
        os.utime(path, (saved, saved))
    (base / "roster.csv").write_text("\n".join(roster) + "\n", encoding="utf-8")
    (base / "deadlines.csv").write_text(f"lab,deadline\n{TINY_LAB},2026-09-21T14:13:20Z\n", encoding="utf-8")
    (base / "overrides.csv").write_text(f"student,lab,check,verdict,points,reason\n"
                                        f"s002,{TINY_LAB},check-shout,fail,,benchmark\n", encoding="utf-8")
    return labs, homes


def step(name: str, fn) -> None:
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        assert fn() == 0
    print(f"{name:<44} {time.perf_counter() - started:7.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=course.grade.default_jobs())
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        labs, homes = build(base, args.students)
        subs, out = base / "submissions", base / "graded"
        common = [str(subs), "--labs", str(labs), "--lessons", str(base), "--output", str(out),
                  "--jobs", str(args.jobs), "--timeout", "30", "--roster", str(base / "roster.csv")]
        term = ["--deadlines", str(base / "deadlines.csv"), "--late-policy", "10%/day",
                "--overrides", str(base / "overrides.csv")]
        print(f"A class of {args.students} students, the tiny lab, {args.jobs} jobs:")
        step("collect", lambda: course.collect.main([str(homes), "--out", str(subs), "--labs", str(labs),
                                                     "--lessons", str(base)]))
        step("grade (roster only)", lambda: course.grade.main(common))
        step("grade + deadlines, late policy, overrides", lambda: course.grade.main(common + term))
        step("the same + --similarity", lambda: course.grade.main(common + term + ["--similarity"]))
        step("regrade one student (--only)", lambda: course.grade.main(common + term + ["--only", "s002"]))
        step("export canvas + moodle", lambda: course.grade.main(["export", str(out), "--format", "canvas",
                                                                  "--format", "moodle"]))
        step("give back", lambda: course.grade.main(["give-back", str(out), str(homes)]))


if __name__ == "__main__":
    main()
