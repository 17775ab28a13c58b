"""Every lesson under every provider shape: `python -m tests.providers.table`.

    python -m tests.providers.table [--shapes ollama,deepseek,openai] [--lessons 03,05]
                                    [--json results.json] [--save DIR] [--labs]

Runs the lessons one at a time (each in a fresh kernel, behind a fresh proxy per shape) and
prints a Markdown table lesson x shape: "ran (N req)" with the number of chat requests that
reached the proxy, or the first failing cell and its error. With --json every result is also
written as it arrives, so an interrupted run keeps what it measured; with --save the executed
notebooks are kept in DIR (LESSON.SHAPE.ipynb) to read what a cell printed under each shape.
--labs runs the labs instead, with their reference solutions injected: a check that fails
counts as the failing cell.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tests.providers.conformance import LessonRun, labs, lessons, run_lab, run_lesson
from tests.providers.proxy import SHAPES, ProviderProxy


def markdown_table(results: list[LessonRun], shapes: list[str]) -> str:
    by_key = {(r.lesson, r.shape): r for r in results}
    names = sorted({r.lesson for r in results})
    rows = ["| lesson | " + " | ".join(shapes) + " |", "|---" * (len(shapes) + 1) + "|"]
    for name in names:
        cells = [by_key[name, s].verdict().replace("|", "\\|") if (name, s) in by_key else "—"
                 for s in shapes]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--lessons", default="", help="lesson numbers, e.g. 03,05 (default: all)")
    parser.add_argument("--json", type=Path, help="also write the results here, as they arrive")
    parser.add_argument("--save", type=Path, help="keep the executed notebooks in this folder")
    parser.add_argument("--labs", action="store_true", help="run the labs (solved), not lessons")
    args = parser.parse_args(argv)
    shapes = [s for s in args.shapes.split(",") if s]
    wanted = {n.zfill(2) for n in args.lessons.split(",") if n}
    paths = [p for p in (labs() if args.labs else lessons()) if not wanted or p.name[:2] in wanted]
    results: list[LessonRun] = []
    for path in paths:
        for shape in shapes:
            with ProviderProxy(shape) as proxy:  # a fresh cache per lesson, as in a new session
                result = run_lab(path, proxy) if args.labs else run_lesson(path, proxy, args.save)
            results.append(result)
            print(f"{shape:9s} {result.lesson}: {result.verdict()}", file=sys.stderr, flush=True)
            if args.json:
                args.json.write_text(json.dumps([r.as_dict() for r in results], indent=1,
                                                ensure_ascii=False), encoding="utf-8")
    print(markdown_table(results, shapes))
    return 0 if all(r.ran for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
