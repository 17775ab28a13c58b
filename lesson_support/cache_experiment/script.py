"""The scripted agent run every strategy replays: a build engineer's system prompt, four tool
definitions, the task (with a preloaded file list) and deterministic tool calls and results,
so runs under different strategies are comparable token for token."""
from __future__ import annotations

import json
import random
from datetime import datetime
from typing import NamedTuple

START_TIME = datetime(2026, 9, 14, 10, 30, 45, 123456)

SYSTEM_PROMPT = """\
You are a build engineer agent working inside one firmware repository. You fix build and test
failures with the smallest change that works.

Rules:
1. Read before you write: look at the file, the build log or the test output first.
2. Use the tools; never guess a file's content or a command's output.
3. Change one thing at a time, then rebuild to check it.
4. Keep every error message you quote exactly as the tool returned it.
5. Never delete tests, never weaken an assertion to make it pass.
6. Paths are relative to the repository root; stay inside it.
7. When the build and the tests pass, answer with a short report: what was wrong, what you
   changed (file and line), how you checked it.
"""

TOOLS = [
    {"type": "function", "function": {
        "name": "read_file",
        "description": "Read part of a text file in the repository, with line numbers.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "file path relative to the repository root"},
            "offset": {"type": "integer", "description": "first line to read (1-based)"},
            "limit": {"type": "integer", "description": "number of lines to read"}},
            "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "search_code",
        "description": "Search the repository for a literal string; returns path:line: text.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "the text to look for"},
            "glob": {"type": "string", "description": "only files matching this pattern"},
            "max_results": {"type": "integer", "description": "stop after this many matches"}},
            "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "run_command",
        "description": "Run a build or test command in the repository and return its output.",
        "parameters": {"type": "object", "properties": {
            "command": {"type": "string", "description": "the command line to run"},
            "timeout_s": {"type": "integer", "description": "give up after this many seconds"},
            "cwd": {"type": "string", "description": "working directory, relative to the root"}},
            "required": ["command"]}}},
    {"type": "function", "function": {
        "name": "write_file",
        "description": "Replace lines of a text file in the repository with new text.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "file path relative to the repository root"},
            "start_line": {"type": "integer", "description": "first line to replace"},
            "end_line": {"type": "integer", "description": "last line to replace"},
            "text": {"type": "string", "description": "the new lines"}},
            "required": ["path", "start_line", "end_line", "text"]}}},
]


class ScriptStep(NamedTuple):
    call_id: str
    tool: str
    arguments: dict   # kept as a dict: how it is serialised is part of the experiment
    result: str


def _project_listing() -> str:
    """A made-up repository's file list, preloaded into the task as agents often do."""
    folders = {"src/drivers/sensor": "c", "src/drivers/radio": "c", "src/app": "c", "src/ota": "c",
               "third_party/zlib": "c", "cmake/toolchains": "cmake", "tests/unit": "py",
               "tests/integration": "py"}
    names = ["config", "init", "power", "buffer", "protocol", "update", "crc", "log"]
    return "\n".join(f"{folder}/{name}_{i}.{ext}" for folder, ext in folders.items()
                     for i, name in enumerate(names))


TASK = ("The aarch64 cross build of the firmware fails. Find out why, fix it, and make sure the "
        "unit tests pass.\n\nRepository files:\n" + _project_listing())


def _log(step: int, lines: int = 18) -> str:
    rows = [f"[{(step * 7 + i) % 100:3d}%] Building C object src/app/CMakeFiles/app.dir/"
            f"module_{step}_{i}.c.o" for i in range(lines)]
    rows.append("/usr/bin/ld: libz.a(inflate.c.o): Relocations in generic ELF (EM: 62) "
                f"[pass {step}]")
    return "\n".join(rows)


def _file(path: str, start: int, lines: int = 20) -> str:
    stem = path.rsplit("/", 1)[-1].split(".")[0].upper()
    return "\n".join(f"{n:4d}  set(FIRMWARE_{stem}_{n} \"${{CMAKE_CURRENT_LIST_DIR}}/opt{n % 7}\")"
                     for n in range(start, start + lines))


def scripted_steps(n: int = 12) -> list[ScriptStep]:
    """A deterministic agent run: the same tool calls and results for every strategy."""
    if n < 1:
        raise ValueError("a run needs at least one step")
    plan = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            args = {"command": f"cmake --build build-aarch64 --target firmware_{i}",
                    "timeout_s": 600, "cwd": "."}
            plan.append(("run_command", args, _log(i)))
        elif kind == 1:
            path = f"cmake/toolchains/aarch64_{i}.cmake"
            args = {"path": path, "offset": 10 * i + 1, "limit": 20}
            plan.append(("read_file", args, _file(path, 10 * i + 1)))
        elif kind == 2:
            args = {"query": f"find_package(ZLIB {i}", "glob": "**/*.cmake", "max_results": 20}
            hits = "\n".join(f"cmake/module_{j}.cmake:{10 + j * i}: find_package(ZLIB REQUIRED)"
                             for j in range(12))
            plan.append(("search_code", args, hits))
        else:
            args = {"path": f"cmake/toolchains/aarch64_{i}.cmake", "start_line": 3 + i,
                    "end_line": 4 + i, "text": f"set(ZLIB_ROOT /opt/sysroots/aarch64/usr) # {i}"}
            result = f"replaced lines {3 + i}-{4 + i}; file has {80 + i} lines"
            plan.append(("write_file", args, result))
    return [ScriptStep(f"call_{i + 1:03d}", tool, args, result)
            for i, (tool, args, result) in enumerate(plan)]


def call_messages(step: ScriptStep, arguments: str) -> list[dict]:
    call = {"id": step.call_id, "type": "function",
            "function": {"name": step.tool, "arguments": arguments}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": step.call_id, "content": step.result}]


def scripted_summary(steps: list[ScriptStep]) -> str:
    lines = [f"- {s.call_id} {s.tool}({json.dumps(s.arguments, sort_keys=True)}) -> "
             f"{s.result.splitlines()[-1][:80]}" for s in steps]
    return f"Summary of steps 1-{len(steps)} (older history, compacted):\n" + "\n".join(lines)


def shuffled(items: list, seed: str) -> list:
    items = list(items)
    random.Random(seed).shuffle(items)
    return items
