"""Layer 2, continued: the door no path check can close, hard links.

A symbolic link is a small file that names another path, so `realpath` follows it and the path
check sees where it leads. A hard link is not a pointer at all: it is a second name for the same
file (the same inode), exactly as real as the first. `workspace/notes.txt` can be another name
of `/home/agent/secret.txt`: realpath says it is inside, and bubblewrap, which mounts the
workspace, shows its content too, because that content *is* in the workspace.

What does tell is the file's link count: a file with more names than the workspace holds has a
name outside it. `outside_links(workspace)` walks the workspace (one `lstat` per file) and
returns those files, and the hardened tool refuses every command while one is there: refusing
only commands that name it is not enough, since `grep -r` reads every file under a folder.

This costs a walk of the workspace per command. Production sandboxes avoid the question by
giving the workspace a filesystem of its own (a hard link cannot cross filesystems) or by
copying files in. (Linux's fs.protected_hardlinks only stops links to files the linker does not
own; it does not stop someone linking their own secrets.)
"""
from __future__ import annotations

import os

from solutions.sandbox.refusal import Refusal, quote


def outside_links(workspace, limit: int = 5) -> list[str]:
    """Up to `limit` files in `workspace` (relative paths) that also have a name outside it."""
    root = os.path.realpath(workspace)
    files: dict[tuple[int, int], list] = {}  # (device, inode) -> [names inside, link count, path]
    folders = [root]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # unreadable here is unreadable for the command too
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    if st.st_nlink > 1:
                        seen = files.setdefault((st.st_dev, st.st_ino), [0, st.st_nlink, entry.path])
                        seen[0] += 1
            except OSError:
                continue
    found = sorted(os.path.relpath(path, root) for inside, links, path in files.values()
                   if inside < links)
    return found[:limit]


def refuse_outside_links(workspace) -> None:
    """Raise Refusal while the workspace holds a hard link to a file outside it."""
    found = outside_links(workspace, limit=1)
    if found:
        raise Refusal(f"the workspace holds a hard link to a file outside it ({quote(found[0])} "
                      "is also reachable by a name outside the workspace), which no path check "
                      "can tell from an ordinary file. Remove the link, or copy the file in "
                      "instead, before running commands here.")
