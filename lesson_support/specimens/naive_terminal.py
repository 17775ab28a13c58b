"""The naive terminal tool: the peer design (Hello-Agents chapter 9), reproduced faithfully.

What it gets right is the *idea*: give the agent grep, head, find and wc so it can fetch what
it needs just in time instead of having whole files pasted into its context. What it gets
wrong is the sandbox, and this module keeps every one of those defects on purpose, because
the lesson breaks them one by one:

- the whitelist is checked on the *first word* only;
- the workspace check applies only to `cd`; every other argument can name any path;
- the command runs with `shell=True`, so `;`, `|`, `$(...)`, `>` and wildcards all work;
- the whole environment of the agent process (API keys included) is passed on;
- output is captured completely and only then cut to the cap;
- on timeout only the shell is killed; whatever it started keeps running.

The published package also whitelists interpreters (python, bash, sh, node); they are left
out here, because with them no bypass is even needed.
"""
from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

ALLOWED_COMMANDS = frozenset({
    "ls", "tree", "cat", "head", "tail", "less", "more", "find", "grep", "egrep", "fgrep",
    "wc", "sort", "uniq", "cut", "awk", "sed", "pwd", "cd", "file", "stat", "du", "df",
    "echo", "which", "whereis",
})


class TerminalTool:
    """Runs whitelisted commands in a workspace. Not a sandbox: see the module docstring."""

    def __init__(self, workspace=".", timeout: float = 30, max_output_size: int = 10 * 1024 * 1024,
                 allow_cd: bool = True, *, environ=None, shell: str = "/bin/sh"):
        self.workspace = Path(workspace).resolve()
        self.timeout = timeout
        self.max_output_size = max_output_size
        self.allow_cd = allow_cd
        # The environment the agent process would pass on (os.environ unless a test or the
        # red-team harness stands in for it) and the shell that shell=True starts.
        self.environ = os.environ if environ is None else environ
        self.shell = shell
        self.current_dir = self.workspace
        self.workspace.mkdir(parents=True, exist_ok=True)

    def run(self, command: str) -> str:
        command = command.strip()
        if not command:
            return "Command is empty."
        try:
            parts = shlex.split(command)
        except ValueError as exc:
            return f"Could not parse the command: {exc}"
        if not parts:
            return "Command is empty."
        base_command = parts[0]  # the only word the whitelist ever sees
        if base_command not in ALLOWED_COMMANDS:
            return (f"Command not allowed: {base_command}\n"
                    f"Allowed commands: {', '.join(sorted(ALLOWED_COMMANDS))}")
        if base_command == "cd":
            return self._handle_cd(parts)
        return self._execute(command)

    def _handle_cd(self, parts: list[str]) -> str:
        # The one place where the workspace boundary is enforced.
        if not self.allow_cd:
            return "cd is disabled."
        if len(parts) < 2:
            return f"Current directory: {self.current_dir}"
        target = parts[1]
        if target == "..":
            new_dir = self.current_dir.parent
        elif target == ".":
            new_dir = self.current_dir
        elif target == "~":
            new_dir = self.workspace
        else:
            new_dir = (self.current_dir / target).resolve()
        try:
            new_dir.relative_to(self.workspace)
        except ValueError:
            return f"Access outside the workspace is not allowed: {new_dir}"
        if not new_dir.exists():
            return f"Directory does not exist: {new_dir}"
        if not new_dir.is_dir():
            return f"Not a directory: {new_dir}"
        self.current_dir = new_dir
        return f"Changed directory to: {self.current_dir}"

    def _execute(self, command: str) -> str:
        try:
            result = subprocess.run(
                command, shell=True, executable=self.shell, cwd=str(self.current_dir),
                capture_output=True, text=True, timeout=self.timeout,
                env=dict(self.environ))  # every variable of the agent process, keys included
            output = result.stdout
            if result.stderr:
                output += f"\n[stderr]\n{result.stderr}"
            # The cap is applied here, after the whole output already sits in memory.
            if len(output) > self.max_output_size:
                output = output[:self.max_output_size]
                output += f"\n\n[output truncated: more than {self.max_output_size} characters]"
            if result.returncode != 0:
                output = f"[exit status {result.returncode}]\n\n{output}"
            return output if output else "Command succeeded (no output)."
        except subprocess.TimeoutExpired:
            # subprocess.run killed the shell; anything the shell started lives on.
            return f"Command timed out after {self.timeout} seconds."
        except Exception as exc:
            return f"Command failed: {exc}"
