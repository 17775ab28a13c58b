"""What a summary must copy whole, and which lines of a failure give its cause.

A runtime module shared by the teaching model's summaries (course/llm/summary.py) and chapter
11's archive (solutions/production_compaction): an answer depends on it, not on the teaching
model's internals, so a change to the model cannot silently change a lab's answer.

`identifiers(text)` finds, in order of first appearance, the strings a summary must keep
verbatim. One pattern per kind, tried in this order at each position, so a longer kind wins
over the pieces it is made of (a UUID is not four hex words, `10.0.3.17:8443` not a version):

    URLs (any scheme)          https://github.com/pnggroup/libpng, postgres://u@h:5432/db,
                               s3://bucket/key, pg://ledger-checkpoints, with queries and
                               balanced parentheses: .../wiki/Fork_(system_call)
    UUIDs                      3fa85f64-5717-4562-b3fc-2c963f66afa6
    timestamps                 2025-09-13T05:18:47 (ISO 8601, with a T)
    IP addresses (and port)    10.0.3.17:8443, 192.168.1.20
    host:port                  db.internal.example:5432, localhost:8080, db-primary:5432
    e-mail addresses           ops@example.com
    paths                      /usr/lib/x86_64-linux-gnu/libz.so, deps/zlib/include
    file names                 toolchain.cmake, CMakeLists.txt
    exception class names      ConnectionRefusedError, json.JSONDecodeError
    commit hashes, checksums   3f2a9c1d, d4a8a20d3899...
    ids                        call_12, PROJ-42, aarch64-linux-gnu
    CONSTANT_NAMES             ZLIB_LIBRARY
    versions, long numbers     1.6.43, v2.0.1-rc1, 8443

`error_causes(text)` picks the lines of a failed command's output that say why it failed: the
lines that mention an error, with the line after a header that only announces one ("CMake
Error at ...:230 (message):" is followed by "Could NOT find ZLIB ..."), the last line of a
Python traceback, and without make's "*** [...] Error 1" echoes.

`cut_whole(text, limit, mark)` shortens a text for a summary or a record without cutting an
identifier: every kept identifier is whole.
"""
from __future__ import annotations

import re

IDENTIFIER = re.compile(
    r"\b[A-Za-z][A-Za-z0-9+.-]*://"                                      # URLs, any scheme,
    r"(?:[^\s\"'<>()\[\]`]|\([^\s\"'<>()\[\]`]*\)|\[[^\s\"'<>()\[\]`]*\])+"  # (balanced)
    r"|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"  # UUIDs
    r"|\b\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
    r"|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b"                        # IPv4 (and port)
    r"|\b(?:localhost|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+):\d{1,5}\b"      # host:port
    r"|\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+:\d{2,5}\b"                       # db-primary:5432
    r"|\b[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b"                   # e-mail addresses
    r"|(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]+"                         # paths with a slash
    r"|\b[\w-]+\.(?:py|js|ts|c|h|cc|cpp|hpp|txt|md|json|ya?ml|toml|cfg|ini|log|csv|sh|cmake|"
    r"html|css|rs|go|java|lock|xml|sql|so|a|o|gz|tar|zip|whl)\b"         # file names
    r"|\b(?:[a-z_]\w*\.)*[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Interrupt|Fault)\b"
    r"|\b(?=[0-9a-f]*\d)[0-9a-f]{7,64}\b"                                # hashes
    r"|\b[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*[-_]\d(?:[\w-]|\.(?=\w))*"  # ids: call_12
    r"|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"                                    # CONSTANT_NAMES
    r"|\bv?\d+(?:\.\d+){1,3}(?:-[A-Za-z0-9.]+)?\b|\b\d{4,}\b"            # versions, numbers
)


def unique(items) -> list[str]:
    seen, out = set(), []
    for item in items:
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out


PLAIN_SUFFIXES = ("Error", "Exception", "Warning", "Interrupt", "Fault")


def identifiers(text: str) -> list[str]:
    """Identifiers worth keeping verbatim, in order of first appearance."""
    # No identifier contains white space, so the text is read chunk by chunk, each distinct
    # chunk once, and chunks of letters alone (words) are skipped: same result, much faster on
    # long, repetitive logs.
    found, seen = [], set()
    for chunk in text.split():
        if chunk in seen:
            continue
        seen.add(chunk)
        if chunk.isalpha() and not chunk.endswith(PLAIN_SUFFIXES):
            continue
        found += [m.group(0).rstrip(".,:;") for m in IDENTIFIER.finditer(chunk)]
    return unique(found)


SPACE = re.compile(r"\s")  # what str.split() splits at: no identifier holds one


def cut_whole(text: str, limit: int, mark: str) -> str:
    """`text` if it has at most `limit` characters; else its first characters, at most `limit`,
    then `mark`, which says the text was shortened (the one allowance: a result is never longer
    than limit + len(mark); `mark` alone, without its leading space, when nothing fits).

    Every kept identifier is whole: an identifier is kept whole or left out whole. The cut falls
    at the last white space within the limit; when that would keep less than half the limit (a
    long path, a line of Chinese), inside the run of characters that crosses the limit, at its
    last place that splits no identifier and makes none up (a hash cut out of a longer word)."""
    if not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a whole number of characters, at least 1, not {limit!r}")
    if len(text) <= limit:
        return text
    space = next((i for i in range(limit, -1, -1) if text[i].isspace()), -1)
    kept = text[:space].rstrip() if space > 0 else ""
    if space < limit // 2:
        start = space + 1
        end = SPACE.search(text, limit)
        at = _safe_cut(text[start:end.start() if end else len(text)], limit - start)
        kept = text[:start + at] if at else kept
    return kept + mark if kept else mark.lstrip()


def _safe_cut(run: str, most: int) -> int:
    """The largest n <= most such that run[:n] splits no identifier of `run` and holds only
    identifiers of `run`; 0 when there is none."""
    whole = set(identifiers(run))
    inside = set()
    for m in IDENTIFIER.finditer(run):
        if m.start() >= most:
            break
        inside.update(range(m.start() + 1, min(m.end(), most + 1)))
    return next((n for n in range(most, 0, -1)
                 if n not in inside and set(identifiers(run[:n])) <= whole), 0)


ERROR_LINE = re.compile(r"\b(?:error|fail|not found|exception|denied|missing|refused|traceback|"
                        r"undefined reference|not recognized|no such file|cannot|could not|"
                        r"fatal)|[a-z](?:Error|Exception)\b", re.I)
MAKE_ECHO = re.compile(r"^\s*g?make(?:\[\d+\])?: \*\*\*")
HEADER = re.compile(r"(?::\s*$|^\s*CMake (?:Error|Warning)\b)")
EXCEPTION_LINE = re.compile(r"^\s*(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Fault)\b")
MAX_CAUSES = 4


def error_causes(text: str) -> list[str]:
    """The lines of a failure that give its cause (at most MAX_CAUSES), in order."""
    lines = [line.strip() for line in (text or "").splitlines()]
    if any(line.startswith("Traceback (most recent call last)") for line in lines):
        last = [line for line in lines if EXCEPTION_LINE.match(line)]
        if last:
            return [last[-1]]
    causes, skip = [], -1
    for i, line in enumerate(lines):
        if i == skip or not line or not ERROR_LINE.search(line) or MAKE_ECHO.match(line):
            continue
        if HEADER.search(line):
            j = next((k for k in range(i + 1, len(lines)) if lines[k]), None)
            if j is not None:
                line, skip = f"{line.rstrip(':').rstrip()}: {lines[j]}", j
        causes.append(line)
    causes = unique(causes)
    if not causes:
        first = next((line for line in lines if line), "")
        return [first] if first else []
    return causes[:MAX_CAUSES]
