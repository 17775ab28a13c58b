"""The tools under test: factories `make(workspace, env)` for the naive and the hardened tool.

Each command gets a fresh tool, built in its scene from the scene's workspace and the
environment of the agent process (which the naive tool passes on to the commands it runs).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from solutions.sandbox.hardened import LAYERS, HardenedTerminalTool
from lesson_support.specimens.naive_terminal import TerminalTool

OUTPUT_CAP_BYTES = 64 * 1024
TOOL_TIMEOUT = 2.0  # far above any command that ends by itself, even on a busy machine


@dataclass(frozen=True)
class NaiveFactory:
    """make(workspace, env) for the naive tool: a class rather than a closure, so that it can
    be sent to the worker processes that run attacks side by side (see `runs`)."""
    timeout: float = TOOL_TIMEOUT
    shell: str = "/bin/sh"
    awk: str | None = None

    def __call__(self, workspace, env):
        if self.awk is not None:
            chosen = Path(workspace).parent / "chosen-awk"  # in the scene, outside the workspace
            chosen.mkdir(exist_ok=True)
            if not (chosen / "awk").exists():
                (chosen / "awk").symlink_to(self.awk)
            env = {**env, "PATH": f"{chosen}:{env['PATH']}"}
        return TerminalTool(workspace, timeout=self.timeout, max_output_size=OUTPUT_CAP_BYTES,
                            environ=env, shell=self.shell)


@dataclass(frozen=True)
class HardenedFactory:
    """make(workspace, env) for the hardened tool with `layers` (a class, as NaiveFactory)."""
    layers: tuple
    timeout: float = TOOL_TIMEOUT
    options: tuple = ()  # (name, value) pairs for the tool's constructor

    def __call__(self, workspace, env):
        return HardenedTerminalTool(workspace, self.layers, timeout=self.timeout,
                                    max_output_bytes=OUTPUT_CAP_BYTES, inherited_env=env,
                                    **dict(self.options))


def naive_tool(*, timeout: float = TOOL_TIMEOUT, shell: str = "/bin/sh", awk: str | None = None):
    """A factory for the naive tool, inheriting the scene's agent environment. `awk` (a path
    such as /usr/bin/mawk) makes `awk` that program for the tool, whatever this machine's is."""
    return NaiveFactory(timeout, shell, awk)


def hardened_tool(layers=LAYERS, *, timeout: float = TOOL_TIMEOUT, **options):
    """A factory for the hardened tool with the given layers (options go to its constructor)."""
    return HardenedFactory(tuple(layers), timeout, tuple(options.items()))


def tool_for(layers, *, timeout: float = TOOL_TIMEOUT):
    """The naive tool for `()`, the hardened tool with those layers otherwise."""
    return naive_tool(timeout=timeout) if not layers else hardened_tool(layers, timeout=timeout)
