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

A walk of the workspace costs one `stat` per file, so its result is kept until a folder in the
workspace changes (checking that costs one `stat` per folder). Production sandboxes avoid the
question by giving the workspace a filesystem of its own (a hard link cannot cross
filesystems) or by copying files in. (Linux's fs.protected_hardlinks only stops links to files
the linker does not own; it does not stop someone linking their own secrets.)
"""
from __future__ import annotations

import os
import time

from course.givens.sandbox.refusal import Refusal, quote


def _census(root: str) -> tuple[list[str], dict[str, tuple]]:
    """Every file in `root` with a name outside it (relative paths), and each folder's key."""
    files: dict[tuple[int, int], list] = {}  # (device, inode) -> [names inside, link count, path]
    folders: dict[str, tuple] = {}
    todo = [root]
    while todo:
        folder = todo.pop()
        try:
            st = os.stat(folder)
            folders[folder] = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
            entries = list(os.scandir(folder))
        except OSError:
            continue  # unreadable here is unreadable for the command too
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    if st.st_nlink > 1:
                        seen = files.setdefault((st.st_dev, st.st_ino), [0, st.st_nlink, entry.path])
                        seen[0] += 1
            except OSError:
                continue
    found = sorted(os.path.relpath(path, root) for inside, links, path in files.values()
                   if inside < links)
    return found, folders


def outside_links(workspace, limit: int = 5) -> list[str]:
    """Up to `limit` files in `workspace` (relative paths) that also have a name outside it."""
    return _census(os.path.realpath(workspace))[0][:limit]


# A new name can only appear in the workspace by changing a folder in it (a link, a rename, a
# folder moved in), and that changes the folder's times. So the census is kept, per workspace,
# until one of its folders changes: one stat per folder instead of one per file. Folders changed
# in the last seconds are not trusted (a change in the same clock tick would not show).
RECENT_NS = 2_000_000_000
_KEPT: dict[str, tuple[dict[str, tuple], list[str]]] = {}


def _unchanged(folders: dict[str, tuple]) -> bool:
    for folder, key in folders.items():
        try:
            st = os.stat(folder)
        except OSError:
            return False
        if (st.st_ino, st.st_mtime_ns, st.st_ctime_ns) != key:
            return False
    return True


def refuse_outside_links(workspace) -> None:
    """Raise Refusal while the workspace holds a hard link to a file outside it."""
    root = os.path.realpath(workspace)
    kept = _KEPT.get(root)
    if kept is not None and _unchanged(kept[0]):
        found = kept[1]
    else:
        found, folders = _census(root)
        newest = max((key[2] for key in folders.values()), default=0)
        if time.time_ns() - newest > RECENT_NS:
            _KEPT[root] = (folders, found)
        else:
            _KEPT.pop(root, None)
    if found:
        raise Refusal(f"the workspace holds a hard link to a file outside it ({quote(found[0])} "
                      "is also reachable by a name outside the workspace), which no path check "
                      "can tell from an ordinary file. Remove the link, or copy the file in "
                      "instead, before running commands here.")
