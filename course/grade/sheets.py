"""The instructor's sheets (roster, deadlines, overrides, rubric scores): CSV files with a header
row, read with a clear error naming the file and line of what is wrong (`SheetError`), so that a
mistake in one stops the run before any grading, and nothing is lost."""
from __future__ import annotations

import csv
from pathlib import Path


class SheetError(ValueError):
    """What is wrong with an instructor's sheet, with its file and line."""


def read_sheet(path: Path, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> list[dict]:
    """The rows of the CSV file at `path` as dicts of stripped text, each with its `line`
    number; its header must name every column of `required` and may name those of `optional`
    (any other column is an error: a misspelt one would be silently ignored)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a spreadsheet's UTF-8 may start with a BOM
    except (OSError, UnicodeDecodeError) as exc:
        raise SheetError(f"{path}: cannot read it ({exc})") from None
    reader = csv.DictReader(text.splitlines())
    header = [(name or "").strip() for name in reader.fieldnames or []]
    missing = [c for c in required if c not in header]
    unknown = [c for c in header if c not in required + optional]
    if missing or unknown:
        raise SheetError(f"{path}: its header row must name the columns {', '.join(required)}"
                         + (f" (and may name {', '.join(optional)})" if optional else "")
                         + (f"; missing: {', '.join(missing)}" if missing else "")
                         + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
    reader.fieldnames = header
    rows = []
    for line, row in enumerate(reader, start=2):
        if None in row:
            raise SheetError(f"{path}, line {line}: more values than the header has columns")
        values = {k: (v or "").strip() for k, v in row.items()}
        if any(values.values()):
            rows.append({**values, "line": line})
    return rows


def where(path: Path, row: dict) -> str:
    return f"{path}, line {row['line']}"
