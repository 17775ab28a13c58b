"""Plain-text tables for the lessons: rows under headers, each column padded and aligned.

    >>> print(text_table(["strategy", "tokens"], [["full", "1,200"], ["compact", "300"]], "<>"))
    strategy tokens
    full      1,200
    compact     300

It lives in the runtime because answers (`solutions.costs`) print tables too, and answers may
not import lesson support. Cells are strings the caller has formatted already (thousands
separators, percentages, "3/12"); the table only pads and joins them.
"""
from __future__ import annotations

from collections.abc import Sequence


def text_table(headers: Sequence[str], rows: Sequence[Sequence[object]], align: str, *,
               widths: Sequence[int | None] | None = None, sep: str | Sequence[str] = " ",
               rule: str = "", strip: bool = False) -> str:
    """The header line, then one line per row.

    `align` has one character per column: "<" left, ">" right. `widths` gives the width each
    cell of a column is padded to; None (or no `widths`) makes a column as wide as its widest
    cell, header included, and 0 leaves its cells unpadded. A cell wider than its width is not
    cut: it pushes the rest of its line to the right, as an f-string's `{value:>8}` does.
    `sep` stands between two columns: one string for every gap, or one string per gap. A row
    with fewer cells than there are columns ends after its last cell. `rule`, one character,
    draws a line of it under the headers, as long as the header line; `strip` drops the spaces
    that end a line.
    """
    if len(align) != len(headers) or set(align) - {"<", ">"}:
        raise ValueError(f"align needs one '<' or '>' per column ({len(headers)}), not {align!r}")
    gaps = [sep] * (len(headers) - 1) if isinstance(sep, str) else list(sep)
    if len(gaps) != len(headers) - 1:
        raise ValueError(f"sep needs one string per gap ({len(headers) - 1}), not {len(gaps)}")
    lines = [[str(cell) for cell in row] for row in (headers, *rows)]
    if any(len(line) > len(headers) for line in lines):
        raise ValueError(f"a row has more cells than the {len(headers)} columns")
    sizes = list(widths) if widths is not None else [None] * len(headers)
    sizes = [max(len(line[i]) for line in lines if i < len(line)) if size is None else size
             for i, size in enumerate(sizes)]

    def line_of(cells: list[str]) -> str:
        padded = [cell.ljust(size) if side == "<" else cell.rjust(size)
                  for cell, side, size in zip(cells, align, sizes)]
        text = padded[0] + "".join(gap + cell for gap, cell in zip(gaps, padded[1:]))
        return text.rstrip() if strip else text

    out = [line_of(line) for line in lines]
    if rule:
        out.insert(1, rule * len(out[0]))
    return "\n".join(out)
