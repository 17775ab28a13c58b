"""Layer 4: confinement by the operating system, with bubblewrap (`bwrap`).

Layers 1-3 are rules written in Python about what a command may say. This layer changes what
the command can *reach*, whatever it says: it runs in fresh Linux namespaces where

    /usr (+ /bin, /lib... links)   mounted read-only: the programs and their libraries
    /etc/alternatives              read-only, because Debian's awk is a link through it
    /etc/ld.so.cache               read-only, so programs find their libraries quickly
    the workspace                  mounted at its own path, read-only unless `writable`
    /tmp                           an empty scratch tmpfs, gone when the command ends
    /proc, /dev                    private and minimal
    nothing else                   no home directory, no secrets, no other project

and `--unshare-all` removes the network and gives it its own process tree, `--clearenv`
empties the environment, `--die-with-parent` and the private process tree make sure nothing
outlives the call, and `--new-session` detaches it from any terminal.

Bubblewrap is a Debian package (`apt-get install bubblewrap`). Where it is missing or cannot
create namespaces (many containers forbid unprivileged user namespaces), `bubblewrap_problem()`
says which in one line, and the tool refuses to run with this layer switched on rather than
silently running without it. Layers 1-3 do not need it. To see how the course behaves on such a
machine, set COURSE_NO_BWRAP=1 in the environment before starting Python.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from functools import lru_cache

from course.system_mounts import system_mounts
from solutions.sandbox.hygiene import minimal_env


class ConfinementUnavailable(RuntimeError):
    """Bubblewrap is not installed or cannot sandbox here; the message says which."""


def bubblewrap_argv(argv: list[str], workspace, *, cwd=None, writable: bool = False,
                    bwrap: str | None = None) -> list[str]:
    """The argv that runs `argv` inside a bubblewrap sandbox holding only the workspace.

    The workspace is mounted at its real path, so paths checked by layer 2 and printed by
    `pwd` mean the same inside and outside. `bwrap` is the program to start (default: the
    `bwrap` found on PATH; raises ConfinementUnavailable without one).
    """
    bwrap = bwrap or shutil.which("bwrap")
    if bwrap is None:
        raise ConfinementUnavailable(_MISSING)
    root = os.path.realpath(workspace)
    inside = os.path.realpath(cwd) if cwd is not None else root
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
            # /etc/alternatives: Debian's awk is a link through it; /etc/ld.so.cache: where the
            # libraries are, which saves the loader a search
            *system_mounts(("/etc/alternatives", "/etc/ld.so.cache")),
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
            "--bind" if writable else "--ro-bind", root, root,
            "--chdir", inside]
    for name, value in minimal_env(root).items():
        args += ["--setenv", name, value]
    return args + ["--", *argv]


_MISSING = ("OS confinement needs bubblewrap (bwrap), which is not installed here: install the "
            "Debian package 'bubblewrap', or leave out the 'confine' layer.")
SWITCH_OFF = "COURSE_NO_BWRAP"
_SWITCHED_OFF = (f"OS confinement is switched off by {SWITCH_OFF}=1 in the environment (as on a "
                 "machine where bubblewrap cannot create namespaces): leave out the 'confine' "
                 "layer, or unset the variable.")


@lru_cache(maxsize=1)
def bubblewrap_problem() -> str | None:
    """None if bubblewrap can sandbox a command here; otherwise one line saying why not."""
    if os.environ.get(SWITCH_OFF, "") not in ("", "0"):
        return _SWITCHED_OFF
    if shutil.which("bwrap") is None:
        return _MISSING
    with tempfile.TemporaryDirectory(prefix="bwrap-probe-") as probe:
        try:
            done = subprocess.run(bubblewrap_argv(["true"], probe), capture_output=True,
                                  timeout=10, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap is installed but could not start a sandbox: {exc}"
    if done.returncode != 0:
        detail = " ".join(done.stderr.decode("utf-8", "replace").split())[:160]
        return ("bubblewrap is installed but cannot create a sandbox here (it needs user "
                f"namespaces or root): {detail or 'exit status ' + str(done.returncode)}")
    return None
