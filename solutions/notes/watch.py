"""Which files in the notes folder changed since we last looked (Linux inotify, through ctypes).

An edit made in place (an editor that rewrites the file, `echo >> note.md`) changes the note
file but not the folder, so the folder's own timestamp cannot tell. Checking every file's
metadata before every call can, but costs one `stat` per note. The kernel can tell us instead:
a watch on the folder queues an event for every note file created, written, renamed, removed
or touched, and reading that queue costs nothing when nothing happened.

`FolderWatch.changes()` returns the names that had events, or None when it cannot say
(no inotify here, the queue overflowed, the folder itself was moved): the caller then checks
every file. Where inotify is missing (macOS) the tool falls back to full checks.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
from functools import lru_cache

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
WATCHED = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
           | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)
LOST = IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, length of the name that follows


@lru_cache(maxsize=1)
def _libc():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.inotify_init1, libc.inotify_add_watch  # noqa: B018 (present only on Linux)
        return libc
    except (OSError, AttributeError):
        return None


class FolderWatch:
    """Events on the files directly inside one folder (not in its subfolders)."""

    def __init__(self, folder=None):
        """A watch on `folder`; without one (or where inotify is missing) an inactive watch."""
        self.fd: int | None = None
        libc = _libc()
        if folder is None or libc is None:
            return
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return  # e.g. the per-user limit of watches is reached: fall back to full checks
        if libc.inotify_add_watch(fd, os.fsencode(folder), WATCHED) < 0:
            os.close(fd)
            return
        self.fd = fd

    @property
    def active(self) -> bool:
        return self.fd is not None

    def changes(self) -> set[str] | None:
        """Names of files with events since the last call; None if that cannot be known."""
        if self.fd is None:
            return None
        names: set[str] = set()
        lost = False
        while True:
            try:
                data = os.read(self.fd, 64 * 1024)
            except BlockingIOError:
                break
            offset = 0
            while offset + _EVENT.size <= len(data):
                _, mask, _, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size
                name = data[offset:offset + length].rstrip(b"\0")
                offset += length
                if mask & LOST:
                    lost = True
                elif name:
                    names.add(os.fsdecode(name))
        if lost:
            self.close()  # the watch is gone or incomplete: the caller checks everything
            return None
        return names

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __del__(self):
        self.close()
