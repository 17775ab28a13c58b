"""The hardened terminal tool: the naive tool's job, with up to four layers of defence.

    parse      layer 1  no shell: argv from `parse_command`, shell syntax refused
    arguments  layer 2  per-command option rules; every path resolved and kept in the workspace;
                        no hard link in the workspace to a file outside it (links.py)
    hygiene    layer 3  minimal env, stdin closed, process group killed, capped read, rlimits
    confine    layer 4  bubblewrap: only the workspace visible, no network, cleared environment

Layers can be switched on one at a time (`layers=("parse",)`, then `("parse", "arguments")`,
...) so the red-team table can be re-run after each one; each layer's function can also be
replaced (`parse=my_parse_command`), which is how the lab plugs in a student's version.

With `parse` off the command goes to `/bin/sh -c` like the naive tool's (the whitelist still
sees only the first word), which shows what layers 3 and 4 achieve on their own. `arguments`
works on an argv, so it needs `parse`. The whitelist and the `cd` boundary are always on.

`run(command)` returns the reply the agent sees: the output itself when the command succeeded,
the output plus one bracketed note line when it failed or was stopped, or a one-line
"Refused: ..." that says what to do instead. It never raises, whatever the input.
"""
from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from course.givens.sandbox import (DEFAULT_LIMITS, RULES, TRUSTED_PATH, Refusal, ResourceLimits,
                                   RunResult, quote)
from solutions.sandbox.arguments import check_arguments, resolve_inside
from solutions.sandbox.confine import bubblewrap_argv, bubblewrap_problem
from solutions.sandbox.hygiene import run_plain, run_with_hygiene
from solutions.sandbox.links import refuse_outside_links
from solutions.sandbox.parse import check_text, parse_command

LAYERS = ("parse", "arguments", "hygiene", "confine")
ALLOWED_COMMANDS = frozenset(RULES) | {"find", "cd"}
SHELL = "/bin/sh"


@dataclass(frozen=True)
class CommandResult:
    """What happened to one command. `refusal` is set when it never ran."""
    output: str = ""
    exit_code: int | None = 0
    refusal: str | None = None
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.refusal is None and self.exit_code == 0 and not self.truncated


class HardenedTerminalTool:
    """A terminal tool for just-in-time retrieval whose defences are switched on by layer."""

    def __init__(self, workspace, layers=LAYERS, *, timeout: float = 5.0,
                 max_output_bytes: int = 64 * 1024, writable: bool = False, inherited_env=None,
                 limits: ResourceLimits = DEFAULT_LIMITS, parse=parse_command,
                 check=check_arguments, run_hygienic=run_with_hygiene, confine=bubblewrap_argv):
        layers = tuple(layers)
        unknown = [layer for layer in layers if layer not in LAYERS]
        if unknown:
            raise ValueError(f"unknown layer(s) {unknown}: choose from {list(LAYERS)}")
        if "arguments" in layers and "parse" not in layers:
            raise ValueError("the 'arguments' layer checks an argv, so it needs the 'parse' layer")
        if timeout <= 0 or max_output_bytes <= 0:
            raise ValueError("timeout and max_output_bytes must be positive")
        self.workspace = Path(workspace).resolve()
        if not self.workspace.is_dir():
            raise ValueError(f"the workspace {str(self.workspace)!r} is not a directory")
        self.layers = tuple(layer for layer in LAYERS if layer in layers)
        self.timeout = timeout
        self.max_output_bytes = max_output_bytes
        self.writable = writable
        # Used only while the hygiene layer is off: what the agent process would pass on.
        self.inherited_env = dict(os.environ if inherited_env is None else inherited_env)
        self.limits = limits
        self.parse, self.check = parse, check
        self.run_hygienic, self.confine = run_hygienic, confine
        self.current_dir = self.workspace

    # -- the agent-facing call ----------------------------------------------------------------

    def run(self, command) -> str:
        """The reply the agent sees (never raises)."""
        return self.format_reply(self.execute(command))

    def execute(self, command) -> CommandResult:
        try:
            return self._execute(command)
        except Refusal as refusal:
            return CommandResult(exit_code=None, refusal=str(refusal))
        except Exception as exc:  # a layer function failed: say so in one line, never crash
            message = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
            return CommandResult(exit_code=None, refusal=f"Refused: internal error in the tool "
                                                         f"({message}); the command did not run.")

    def format_reply(self, result: CommandResult) -> str:
        if result.refusal is not None:
            return result.refusal
        notes = []
        if result.truncated:
            notes.append(f"[output stopped at {self.max_output_bytes:,} bytes: narrow the command, "
                         "e.g. with head -n, grep or wc]")
        if result.timed_out:
            notes.append(f"[stopped after {self.timeout:g} s: the command took too long]")
        if result.exit_code not in (0, None):
            notes.append(f"[exit status {result.exit_code}]")
        if not notes:
            return result.output if result.output else "(no output)"
        output = result.output
        if output and not output.endswith("\n"):
            output += "\n"
        return output + " ".join(notes)

    # -- the layers, in order -----------------------------------------------------------------

    def _execute(self, command) -> CommandResult:
        check_text(command)
        if "parse" in self.layers:
            argv = list(self.parse(command))
        else:
            try:  # only to find the first word, exactly as the naive tool does
                argv = shlex.split(command)
            except ValueError as exc:
                raise Refusal(f"the command could not be split into words: {exc}.") from None
        if not argv:
            raise Refusal("the command is empty. Send a command such as: ls")
        program = argv[0]
        if program not in ALLOWED_COMMANDS:
            raise Refusal(f"{quote(program)} is not an allowed command. Allowed: "
                          f"{', '.join(sorted(ALLOWED_COMMANDS))}.")
        if program == "cd":
            return self._change_dir(argv)
        if "parse" in self.layers:
            if "arguments" in self.layers:
                argv = list(self.check(argv, self.workspace, self.current_dir))
                refuse_outside_links(self.workspace)  # the workspace itself, not the command
            argv[0] = self._locate(argv[0])
        else:
            argv = [SHELL, "-c", command]
        if "confine" in self.layers:
            problem = bubblewrap_problem()
            if problem:
                raise Refusal(problem)
            argv = self.confine(argv, self.workspace, cwd=self.current_dir, writable=self.writable)
        try:
            if "hygiene" in self.layers:
                ran = self.run_hygienic(argv, self.current_dir, timeout=self.timeout,
                                        max_output_bytes=self.max_output_bytes,
                                        home=self.workspace, limits=self.limits)
            else:
                ran = run_plain(argv, self.current_dir, env=self.inherited_env,
                                timeout=self.timeout, max_output_bytes=self.max_output_bytes)
        except OSError as exc:
            raise Refusal(f"{quote(program)} could not be started: {exc.strerror or exc}.")
        return self._result(ran)

    @staticmethod
    def _result(ran: RunResult) -> CommandResult:
        return CommandResult(output=ran.output, exit_code=ran.exit_code,
                             timed_out=ran.timed_out, truncated=ran.truncated)

    def _locate(self, program: str) -> str:
        # Programs come from the system directories only, never from PATH entries an agent
        # (or a file in the workspace) could influence.
        found = shutil.which(program, path=TRUSTED_PATH)
        if found is None:
            raise Refusal(f"{quote(program)} is not installed in {TRUSTED_PATH}.")
        return found

    def _change_dir(self, argv: list[str]) -> CommandResult:
        if len(argv) > 2:
            raise Refusal("cd takes one directory.")
        if len(argv) == 1:
            self.current_dir = self.workspace
        else:
            target = Path(resolve_inside(argv[1], self.workspace, self.current_dir))
            if not target.is_dir():
                raise Refusal(f"{quote(argv[1])} is not a directory in the workspace.")
            self.current_dir = target
        shown = self.current_dir.relative_to(self.workspace).as_posix()
        return CommandResult(output=f"now in {'the workspace root' if shown == '.' else shown}")
