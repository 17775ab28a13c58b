"""Text a student controls, made safe to write wherever the grader writes it.

A student controls their folder's and notebook's names, their notebook's metadata (its edition),
what their code returns and raises (the checks quote it in their messages), their notes' subject
and their reflections. Before any of it is written:

- `capped`: at most DETAIL_LIMIT characters (ANSWER_LIMIT for a reflection), the rest cut with
  a note saying how much (one student once wrote 8 MiB into every gradebook file); the
  gradebook caps every submission once (`course.grade.gradebook.capped_submission`);
- `visible`: control characters (terminal escapes, carriage returns), Unicode's invisible
  direction and format controls, and lone surrogates (text no file can encode) are spelt out,
  `\\x1b`, `\\u202e`, `\\ud800`, so what is shown is what is there;
- then escaped for its format: `md` (one line of Markdown text: nothing in it can start a
  heading, a table row, a list, a link or HTML), `md_code` (a code span), `md_block` (code, fenced), `md_quoted` (a
  reflection's lines, in a block quote) and `csv_field` (a spreadsheet never reads it as a
  formula: a leading `=`, `+`, `-`, `@`, tab or carriage return gets a `'` before it, as OWASP
  advises; the value is otherwise unchanged).
"""
from __future__ import annotations

import os
import re

DETAIL_LIMIT = 4_000    # characters of a check's detail, a note or a reason
ANSWER_LIMIT = 20_000   # characters of a reflection's answer
NAME_LIMIT = 2_000      # characters of a name: a student's, a notebook's path, an edition

# C0 and C1 controls but tab and newline, DEL, zero-width and direction controls, line and
# paragraph separators, the byte-order mark, and the surrogates (alone, they encode to nothing)
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
                     "\ud800-\udfff]")
# what Markdown reads inline; `_` only at a word's edge (inside a word it is text: run_agent)
_MD_INLINE = re.compile(r"([\\`*\[\]<>&|~#$]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z]))")
# what starts a block when it opens a line, beyond the inline marks: a list item, a rule, an underline
_MD_LINE_START = re.compile(r"^(\s*)(\d+[.)]|[-+=])")
_FORMULA_START = tuple("=+-@\t\r")


def capped(text: str, limit: int = DETAIL_LIMIT) -> str:
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]} … ({len(text) - limit:,} more characters cut)"


def _spelt(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every character that would act rather than show spelt out (newlines and tabs
    kept); the result always encodes to UTF-8."""
    return _HIDDEN.sub(_spelt, str(text))


def display_name(name: str) -> str:
    """A file name as the operating system gave it (bytes that are not UTF-8 arrive as lone
    surrogates) with those bytes spelt out: `b\\xffd.ipynb`."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def md(text: str) -> str:
    """`text` as one line of inert Markdown: visible, its lines joined with " — "."""
    lines = (" ".join(line.split()) for line in visible(text).split("\n"))
    return _MD_INLINE.sub(r"\\\1", " — ".join(line for line in lines if line))


def md_code(text: str) -> str:
    """`text` as a Markdown code span (file names): one line, fenced by more backticks than it holds."""
    text = " ".join(visible(text).split())
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(text: str) -> list[str]:
    """`text` (a student's code) as a fenced Markdown code block: visible, fenced by more
    backticks than any run in it, so no line of it can close the block early."""
    text = visible(text)
    fence = "`" * max(3, max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return [fence, *text.rstrip("\n").split("\n"), fence]


def md_quoted(text: str, prefix: str = "   > ") -> list[str]:
    """A reflection's answer as block-quote lines: each line escaped inline and at its start,
    so the answer's words show but none of its Markdown (or HTML) takes effect."""
    out = []
    for line in visible(text).split("\n"):
        line = _MD_INLINE.sub(r"\\\1", line.rstrip())
        line = _MD_LINE_START.sub(lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], line)
        out.append(prefix + line if line.strip() else prefix.rstrip())
    return out


def csv_field(value):
    """A gradebook.csv value: text visible, never read as a formula; numbers unchanged."""
    if not isinstance(value, str):
        return value
    value = visible(value)
    return "'" + value if value.startswith(_FORMULA_START) else value
