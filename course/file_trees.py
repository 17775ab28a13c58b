"""Walking and removing folder trees that a student's code or upload may have made: without
recursion (a tree 1,500 folders deep is past Python's recursion limit, where `os.walk` and
`shutil.rmtree` raise RecursionError in Python 3.11), without following links, and through
folder descriptors (so a path longer than the system's limit is no obstacle)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def files(root: Path) -> Iterator[os.DirEntry]:
    """Every entry under `root` that is not a folder (files, links, FIFOs, devices), in no set
    order; folders are entered, links to folders are not."""
    pending = [Path(root)]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
                else:
                    yield entry
            except OSError:
                continue


def file_sizes(root: Path) -> Iterator[int]:
    """The size of every file (not folder, not followed link) under `root`, in no set order."""
    for entry in files(root):
        try:
            yield entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue


def remove_tree(root: Path) -> None:
    """Remove `root` and everything in it, however deep; a missing `root` is no error. Raises
    OSError when something cannot be removed."""
    try:
        fd = os.open(root, _FOLDER)
    except FileNotFoundError:
        return
    path: list[str] = []  # the folder names from `root` down to the one `fd` holds
    try:
        while True:
            inner = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        inner = entry.name
                        break
                    try:
                        os.unlink(entry.name, dir_fd=fd)
                    except FileNotFoundError:
                        pass
            if inner is not None:  # down into a folder; it is removed once it is empty
                below = os.open(inner, _FOLDER, dir_fd=fd)
                os.close(fd)
                fd = below
                path.append(inner)
            elif path:  # this folder is empty: up, and remove it
                above = os.open("..", _FOLDER, dir_fd=fd)
                os.close(fd)
                fd = above
                os.rmdir(path.pop(), dir_fd=fd)
            else:
                break
    finally:
        os.close(fd)
    os.rmdir(root)
