"""Honest truncation of tool output, and offloading large results where the agent can read them.

A tool result that is too long must be cut, but a cut the model cannot see is a lie by
omission: the model will reason from half a log as if it were all of it. So every cut here
says three things: how much was hidden, where the full text is, and how to read the rest
(with the agent's own `read_file`, so the path it is given is one it can actually open).

What to keep depends on the content:

    "log"   build and command output: the end matters (the error, the summary line)
    "file"  file content: keep the start and page forward with read_file(offset=...)
    "search" ranked results (search hits, grep matches): the top ones, and a note that counts
            the rest and says to narrow the query rather than page through them
    "text"  anything else: a bit of both ends

The exit code of a command goes on the first line, outside the part that may be cut.
"""
from __future__ import annotations

import os
from pathlib import Path

# How a budget of `max_lines` lines is split between head and tail, per content type.
KINDS = ("log", "file", "search", "text")
LOG_HEAD_LINES = 5          # a log keeps only its first few lines (the command banner)...
DEFAULT_MAX_LINES = 60      # ...and gives the rest of the budget to its end
DEFAULT_MAX_LINE_CHARS = 400  # one minified-JSON line can be a megabyte; lines are capped too
READ_LIMIT = 200            # lines per read_file page
OUTPUTS_DIR = ".agent/outputs"


def shorten(text: str, head: int = 5, tail: int = 15) -> str:
    """The study guide's minimal head + tail cut: says how many lines it hid, nothing more."""
    lines = text.splitlines()
    if len(lines) <= head + tail:
        return text
    hidden = len(lines) - head - tail
    return "\n".join(lines[:head] + [f"...[{hidden} lines omitted]..."] + lines[len(lines) - tail:])


def split_budget(kind: str, max_lines: int) -> tuple[int, int]:
    """(head, tail) line counts for a content type and a line budget."""
    if kind not in KINDS:
        raise ValueError(f"unknown content kind {kind!r}: use one of {', '.join(KINDS)}")
    if max_lines < 1:
        raise ValueError(f"max_lines must be at least 1, got {max_lines}")
    if kind in ("file", "search"):
        return max_lines, 0
    if kind == "log":
        head = min(LOG_HEAD_LINES, max_lines // 4)
        return head, max_lines - head
    return (max_lines + 1) // 2, max_lines // 2


def cap_line(line: str, max_chars: int) -> str:
    """Cut one over-long line, saying how many characters were left out."""
    if len(line) <= max_chars:
        return line
    return f"{line[:max_chars]}...[+{len(line) - max_chars:,} characters on this line]"


def read_call(path: str, offset: int, limit: int) -> str:
    """The exact read_file call the model should make to see lines offset..offset+limit-1."""
    return f'read_file(path="{path}", offset={offset}, limit={limit})'


def truncate(text: str, kind: str = "text", max_lines: int = DEFAULT_MAX_LINES,
             full_path: str | None = None, max_line_chars: int = DEFAULT_MAX_LINE_CHARS) -> str:
    """Cut `text` to about `max_lines` lines, keeping what matters for its `kind`.

    `full_path` is where the complete text can be read with read_file (a workspace-relative
    path). Without it the note says plainly that the hidden part is gone.
    """
    head, tail = split_budget(kind, max_lines)
    lines = text.splitlines()
    capped = [cap_line(line, max_line_chars) for line in lines]
    if len(lines) <= head + tail:
        if capped == lines:
            return text
        where = f"; full text: {full_path}" if full_path else "; the full text was not kept"
        return "\n".join(capped) + f"\n...[long lines were cut{where}]..."
    first_hidden, last_hidden = head + 1, len(lines) - tail  # 1-based, inclusive
    hidden = last_hidden - first_hidden + 1
    hidden_chars = sum(len(line) + 1 for line in lines[head:len(lines) - tail])
    span = (f"lines {first_hidden}-{last_hidden} of {len(lines):,} omitted "
            f"({hidden:,} lines, {hidden_chars:,} characters)")
    if kind == "search":  # the best come first: more of the tail is rarely what the task needs
        span += "; a narrower query finds the right results faster than reading these"
    if full_path:
        first_page = read_call(full_path, first_hidden, min(hidden, READ_LIMIT))
        how = f"full text: {full_path}; read them with {first_page}"
    else:
        how = "the full text was not kept"
    marker = f"...[{span}; {how}]..."
    return "\n".join(capped[:head] + [marker] + capped[len(lines) - tail:])


class Workspace:
    """The agent's working folder, and a read tool confined to it.

    `read_file` is the tool the agent itself has: it refuses any path outside the folder
    (absolute paths, `..`, symlinks pointing out). Anything the harness tells the model to read
    must therefore live inside; `offload` guarantees that.
    """

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise NotADirectoryError(f"workspace root {self.root} is not a directory")

    def resolve(self, path: str | os.PathLike) -> Path:
        """The real location of `path`, or PermissionError if the agent may not read it."""
        real = (self.root / path).resolve()  # an absolute `path` replaces root, as intended
        if real != self.root and self.root not in real.parents:
            raise PermissionError(f"{path} is outside the workspace {self.root}: read_file can "
                                  f"only open files inside it")
        return real

    def relative(self, path: str | os.PathLike) -> str:
        """`path` as the workspace-relative string the model should be given."""
        return self.resolve(path).relative_to(self.root).as_posix()

    def read_file(self, path: str, offset: int = 1, limit: int = READ_LIMIT) -> str:
        """The agent's read tool: lines offset..offset+limit-1 (1-based), with a paging note."""
        if offset < 1 or limit < 1:
            raise ValueError(f"offset and limit must be at least 1, got offset={offset}, limit={limit}")
        real = self.resolve(path)
        if not real.is_file():
            raise FileNotFoundError(f"{path} is not a file in the workspace")
        lines = real.read_text(encoding="utf-8", errors="replace").splitlines()
        if not lines:
            return f"[{path}: empty file]"
        if offset > len(lines):
            raise ValueError(f"{path} has {len(lines):,} lines; offset {offset} is past the end")
        page = [cap_line(line, DEFAULT_MAX_LINE_CHARS)
                for line in lines[offset - 1:offset - 1 + limit]]
        last = offset - 1 + len(page)
        header = f"[{path}: lines {offset}-{last} of {len(lines):,}"
        if last < len(lines):
            header += f"; next: {read_call(path, last + 1, limit)}"
        return "\n".join([header + "]"] + page)


def next_free_name(directory: Path, prefix: str, suffix: str) -> Path:
    """prefix-0001.suffix, prefix-0002.suffix, ...: the first one not taken (stable order)."""
    n = 1
    while (directory / f"{prefix}-{n:04d}{suffix}").exists():
        n += 1
    return directory / f"{prefix}-{n:04d}{suffix}"


def offload(text: str, workspace: Workspace, directory: str | os.PathLike = OUTPUTS_DIR,
            prefix: str = "output", suffix: str = ".log") -> str:
    """Save `text` to a new file the agent can read; return its workspace-relative path.

    Refuses a directory outside the workspace: a pointer to a file the agent's read_file
    cannot open (the classic "/tmp" mistake) is worse than no pointer at all.
    """
    try:
        folder = workspace.resolve(directory)
    except PermissionError as exc:
        raise ValueError(f"refusing to offload to {directory}: the agent's read_file could not "
                         f"open it ({exc}); offload inside the workspace instead") from None
    folder.mkdir(parents=True, exist_ok=True)
    target = next_free_name(folder, prefix, suffix)
    partial = target.with_name(target.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(target)  # the file appears whole or not at all
    return workspace.relative(target)


def tool_result(output: str, kind: str = "log", exit_code: int | None = None,
                workspace: Workspace | None = None, full_path: str | None = None,
                max_lines: int = DEFAULT_MAX_LINES, prefix: str = "cmd") -> str:
    """The text a tool hands back to the model: exit code first, output cut honestly.

    If the output is too long and no `full_path` is given, the whole output is offloaded into
    `workspace` first, so the note can point at a file read_file can open.
    """
    lines = output.splitlines()
    fits = (len(lines) <= max_lines
            and all(len(line) <= DEFAULT_MAX_LINE_CHARS for line in lines))
    if not fits and full_path is None and workspace is not None:
        full_path = offload(output, workspace, prefix=prefix)
    body = output if fits else truncate(output, kind, max_lines, full_path)
    if exit_code is None:
        return body
    return f"[exit code: {exit_code}]\n{body}"
