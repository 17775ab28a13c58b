"""What every bubblewrap sandbox in the course mounts from the host to run a program at all.

Chapter 07's fourth layer (solutions/sandbox/confine.py) and the grader's confinement
(course/labs/confinement.py) both start programs in an otherwise empty root: they need /usr,
the top-level names that point into it, and a few read-only files under /etc.
"""
from __future__ import annotations

import os
from collections.abc import Sequence

# Top-level names that merged-/usr systems make links into /usr; older systems have real dirs.
SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


def system_mounts(files: Sequence[str] = ()) -> list[str]:
    """bwrap arguments: /usr read-only, each of SYSTEM_DIRS as the link or directory the host
    has, then each of `files` (e.g. "/etc/ld.so.cache") read-only where the host has it."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in SYSTEM_DIRS:
        host = "/" + name
        if os.path.islink(host):
            args += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            args += ["--ro-bind", host, host]
    for path in files:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args
