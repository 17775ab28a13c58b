"""Code execution over MCP: a short program calls MCP tools inside chapter 07's sandbox and
prints only what it needs; the tools' results never enter the model's context.

The program runs as `python program.py` under bubblewrap (chapter 07's layer 4: no network, a
cleared environment, only the system, the course's checkout read-only and a scratch workspace)
with layer 3's hygiene (minimal environment, no stdin, rlimits, its process group killed).
Where bubblewrap cannot sandbox (chapter 07's `bubblewrap_problem`), the program runs with
hygiene alone, and the result says so.
"""
from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from course.givens.sandbox import ResourceLimits
from course.paths import REPO_ROOT
from solutions.sandbox import run_with_hygiene
from solutions.sandbox.confine import bubblewrap_argv, bubblewrap_problem

# Python and the SDK, and a child process per server: more room than a grep needs.
PROGRAM_LIMITS = ResourceLimits(cpu_seconds=60, memory_bytes=4 * 1024 ** 3, open_files=256,
                                file_bytes=64 * 1024 ** 2)  # the tokenizer may write its vocabularies
OUTPUT_LIMIT = 16 * 1024


@dataclass(frozen=True)
class ProgramRun:
    output: str           # what the program printed (stdout and stderr), what the model reads
    exit_code: int | None
    confinement: str      # "bubblewrap" or why not


def _argv(program: Path, workspace: Path) -> tuple[list[str], str]:
    python = [sys.executable, str(program)]
    problem = bubblewrap_problem()
    if problem:
        return python, problem
    argv = bubblewrap_argv(python, workspace)
    cut = argv.index("--")
    # the checkout (the course's packages), the virtual environment and the interpreter it was
    # made from (either may live elsewhere: a pyenv build, a venv outside the checkout), read-only
    binds = []
    for folder in dict.fromkeys([sys.base_prefix, sys.prefix]):
        if not folder.startswith("/usr/") and not folder.startswith(str(REPO_ROOT) + "/"):
            binds += ["--ro-bind", folder, folder]
    argv[cut:cut] = [*binds, "--ro-bind", str(REPO_ROOT), str(REPO_ROOT),
                     "--setenv", "PYTHONPATH", str(REPO_ROOT), "--setenv", "COURSE_TRACE", "off",
                     # no tokenizer in here: do not write its vocabularies to the scratch /tmp
                     "--setenv", "TIKTOKEN_CACHE_DIR", ""]
    return argv, "bubblewrap"


def run_program(code: str) -> ProgramRun:
    """Run `code` (Python) in the sandbox; what it printed, its exit code, how it was confined."""
    with tempfile.TemporaryDirectory(prefix="mcp-program-") as folder:
        workspace = Path(folder)
        program = workspace / "program.py"
        program.write_text(code, encoding="utf-8")
        argv, confinement = _argv(program, workspace)
        done = run_with_hygiene(argv, workspace, timeout=120, max_output_bytes=OUTPUT_LIMIT,
                                limits=PROGRAM_LIMITS)
    return ProgramRun(done.output, done.exit_code, confinement)
