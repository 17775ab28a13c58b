"""What this machine has, and what that means for an attack's outcome.

Some attacks need a program the machine may not have (`needs`: bash as /bin/sh, or gawk as
awk); where it is missing they fail on their own, whatever the tool does. These functions say
which case a machine is in, so tables can print the same cells everywhere (see `tables`).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache

from course.givens.sandbox import TRUSTED_PATH
from course.labs.wire import Remote
from lesson_support.sandbox_attacks.commands import Attack
from solutions.sandbox.confine import bubblewrap_problem


def system_shell() -> str:
    """The shell that shell=True starts here: 'dash' on Debian and Ubuntu, 'bash' elsewhere."""
    return os.path.basename(os.path.realpath("/bin/sh"))


@lru_cache(maxsize=1)
def system_awk() -> str:
    """Which awk `awk` is here: 'gawk' (Fedora, Arch; Debian once gawk is installed) when it
    says it is GNU Awk, otherwise its program's name: 'mawk' (Debian's default), 'original-awk',
    'busybox'... ('' if there is none)."""
    found = shutil.which("awk", path=TRUSTED_PATH)
    if found is None:
        return ""
    try:
        version = subprocess.run([found, "--version"], capture_output=True, timeout=10,
                                 stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        version = b""
    return "gawk" if version.startswith(b"GNU Awk") else os.path.basename(os.path.realpath(found))


def has(program: str | None, shell: str | None = None, awk: str | None = None) -> bool:
    """Whether this machine (or the shell and awk given) has what an attack `needs`."""
    # Read through the package, so that setting `sandbox_attacks.system_awk` (as a test does, to stand
    # in for another machine) changes the answer here too.
    from lesson_support import sandbox_attacks

    if program == "bash":
        return (shell or sandbox_attacks.system_shell()) == "bash"
    if program == "gawk":
        return (awk or sandbox_attacks.system_awk()) == "gawk"
    return True


def expected_blocked(attack: Attack, layers, shell: str | None = None,
                     awk: str | None = None) -> bool:
    """Whether the tool with `layers` (() = naive) should block `attack` on this machine
    (or under the `shell` and `awk` given)."""
    if not has(attack.needs, shell, awk):
        return True  # the shell or awk itself rejects the syntax
    return bool(attack.stopped_by & set(layers))


def confinement_problem(run) -> str | None:
    """Why layer 4 (bubblewrap) cannot wrap the commands that `run` (a run_hygienic function)
    starts, or None: bubblewrap's own problem on this machine, or that `run` is a graded lab's
    function, running in the grader's sandbox, inside which bubblewrap cannot start another."""
    if isinstance(run, Remote):
        return ("it runs inside the grader's sandbox, where bubblewrap cannot start a sandbox "
                "of its own: your layers are checked without layer 4")
    return bubblewrap_problem()


def depends_on_machine(attack: Attack, layers) -> bool:
    """Whether the outcome with `layers` depends on the machine having what the attack needs."""
    return attack.needs is not None and not attack.stopped_by & set(layers)
