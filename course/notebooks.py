"""Authoring tools for lessons and labs.

    python -m course.notebooks build SOURCE.txt OUT.ipynb   cells from a plain-text source
    python -m course.notebooks run NOTEBOOK.ipynb           execute in place, store outputs
    python -m course.notebooks strip NOTEBOOK.ipynb         remove outputs (labs ship clean)

The source format is one line `%% md` or `%% code` (optionally followed by `tags=a,b`,
`key=NAME`, `points=N`) before each cell's text. `%% meta {json}` on the first line sets the
notebook's `course` metadata. Lessons' stored outputs must come from `run`, never from edits.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import nbformat

HEADER = re.compile(r"^%% (md|code|meta)\b(.*)$")
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def from_source(text: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    cell, lines = None, []

    def flush():
        if cell is not None:
            cell.source = "\n".join(lines).strip("\n")
            nb.cells.append(cell)

    for line in text.splitlines():
        match = HEADER.match(line)
        if not match:
            lines.append(line)
            continue
        kind, rest = match.group(1), match.group(2).strip()
        if kind == "meta":
            nb.metadata["course"] = json.loads(rest)
            continue
        flush()
        lines = []
        cell = nbformat.v4.new_markdown_cell() if kind == "md" else nbformat.v4.new_code_cell()
        for option in rest.split():
            name, _, value = option.partition("=")
            if name == "tags":
                cell.metadata["tags"] = value.split(",")
            elif name in ("key", "points"):
                cell.metadata.setdefault("course", {})[name] = float(value) if name == "points" else value
            else:
                raise ValueError(f"unknown cell option {option!r} in line {line!r}")
    flush()
    for i, c in enumerate(nb.cells):  # stable ids: diffs stay small when a cell changes
        c["id"] = f"cell-{i:03d}"
    return nb


def strip_outputs(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    return nb


def execute(path: Path, timeout: int = 600) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)  # widget state carries random model ids
    return nb


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.notebooks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build")
    build.add_argument("source", type=Path)
    build.add_argument("out", type=Path)
    for name in ("run", "strip"):
        sub.add_parser(name).add_argument("notebook", type=Path)
    args = parser.parse_args(argv)
    if args.command == "build":
        nb = from_source(args.source.read_text(encoding="utf-8"))
        nbformat.validate(nb)
        nbformat.write(nb, args.out)
    elif args.command == "run":
        nbformat.write(execute(args.notebook), args.notebook)
    else:
        nbformat.write(strip_outputs(nbformat.read(args.notebook, as_version=4)), args.notebook)
    return 0


if __name__ == "__main__":
    sys.exit(main())
