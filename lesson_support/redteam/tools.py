"""The tools under test: factories `make(workspace, env)` for the naive and the hardened tool.

Each command gets a fresh tool, built in its scene from the scene's workspace and the
environment of the agent process (which the naive tool passes on to the commands it runs).
"""
from __future__ import annotations

from pathlib import Path

from solutions.sandbox.hardened import LAYERS, HardenedTerminalTool
from lesson_support.specimens.naive_terminal import TerminalTool

OUTPUT_CAP_BYTES = 64 * 1024
TOOL_TIMEOUT = 2.0  # far above any command that ends by itself, even on a busy machine


def naive_tool(*, timeout: float = TOOL_TIMEOUT, shell: str = "/bin/sh", awk: str | None = None):
    """A factory for the naive tool, inheriting the scene's agent environment. `awk` (a path
    such as /usr/bin/mawk) makes `awk` that program for the tool, whatever this machine's is."""
    def make(workspace, env):
        if awk is not None:
            chosen = Path(workspace).parent / "chosen-awk"  # in the scene, outside the workspace
            chosen.mkdir(exist_ok=True)
            if not (chosen / "awk").exists():
                (chosen / "awk").symlink_to(awk)
            env = {**env, "PATH": f"{chosen}:{env['PATH']}"}
        return TerminalTool(workspace, timeout=timeout, max_output_size=OUTPUT_CAP_BYTES,
                            environ=env, shell=shell)
    return make


def hardened_tool(layers=LAYERS, *, timeout: float = TOOL_TIMEOUT, **options):
    """A factory for the hardened tool with the given layers (options go to its constructor)."""
    def make(workspace, env):
        return HardenedTerminalTool(workspace, layers, timeout=timeout,
                                    max_output_bytes=OUTPUT_CAP_BYTES, inherited_env=env,
                                    **options)
    return make


def tool_for(layers, *, timeout: float = TOOL_TIMEOUT):
    """The naive tool for `()`, the hardened tool with those layers otherwise."""
    return naive_tool(timeout=timeout) if not layers else hardened_tool(layers, timeout=timeout)
