"""Authoring tools for lessons and labs.

    python -m course.notebooks build SOURCE.txt OUT.ipynb   cells from a plain-text source
    python -m course.notebooks run NOTEBOOK.ipynb           execute in place, store outputs (and
                                                            rebuild its Chinese edition, if any)
    python -m course.notebooks strip NOTEBOOK.ipynb         remove outputs (labs ship clean; its
                                                            Chinese edition is rebuilt too)
    python -m course.notebooks note-widgets NOTEBOOK...     only the widget note (see below)

The source format is one line `%% md` or `%% code` (optionally followed by `tags=a,b`,
`key=NAME`, `points=N`) before each cell's text. `%% meta {json}` on the first line sets the
notebook's `course` metadata. Lessons' stored outputs must come from `run`, never from edits.

A stored widget output is a model id (useless once the kernel is gone) plus a text/plain
fallback, which is what JupyterLab shows before the cell is run again: by default the widget's
repr, `VBox(children=(HBox(...`. `run` replaces that fallback with WIDGET_NOTE; `note-widgets`
does only that to notebooks already run, changing nothing else.
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
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = "Run this cell to see the widget."


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


def widget_outputs(nb: nbformat.NotebookNode):
    """Every stored output that displays a widget."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            for output in cell.get("outputs", []):
                if WIDGET_VIEW in output.get("data", {}):
                    yield output


def note_widgets(nb: nbformat.NotebookNode) -> int:
    """Show WIDGET_NOTE, not the widget's repr, where a widget output is not live; returns how
    many outputs changed."""
    changed = 0
    for output in widget_outputs(nb):
        if output.data.get("text/plain") != WIDGET_NOTE:
            output.data["text/plain"] = WIDGET_NOTE
            changed += 1
    return changed


def execute(path: Path, timeout: int = 600) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)  # widget state carries random model ids
    note_widgets(nb)
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
    sub.add_parser("note-widgets").add_argument("notebooks", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.command == "build":
        nb = from_source(args.source.read_text(encoding="utf-8"))
        nbformat.validate(nb)
        nbformat.write(nb, args.out)
    elif args.command == "run":
        nbformat.write(execute(args.notebook), args.notebook)
    elif args.command == "note-widgets":
        for path in args.notebooks:
            nb = nbformat.read(path, as_version=4)
            changed = note_widgets(nb)
            if changed:
                nbformat.write(nb, path)
            print(f"{path}: {changed} widget output(s) changed")
    else:
        nbformat.write(strip_outputs(nbformat.read(args.notebook, as_version=4)), args.notebook)
    if args.command in ("run", "strip"):
        from course import editions  # the Chinese edition copies code and outputs: keep it in step

        said = editions.refresh(args.notebook)
        if said:
            print(said)
    return 0


if __name__ == "__main__":
    sys.exit(main())
