"""The notes folder on disk: atomic writes, safe reads, tombstones and the highest id ever used.

    notes/
      note-0001.md ...    the notes: the truth, and the only files a person needs to read
      .deleted/note-0003  a tombstone: an empty file per deleted id, so the id stays taken
      .highest-id         the highest id number ever given out (kept outside the index too)
      .index/             the search index (see index.py): a cache, rebuilt from the notes
      .tmp-*.part         a write in progress; one left behind by a killed writer is removed

Every function here works on one file, whatever the number of notes.
"""
from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Union

from course.givens.notes import NOTE_ID, Note, NoteError, NoteFormatError, NoteNotFound
from solutions.notes.format import check_note_id, parse_note

TOMBSTONES = ".deleted"
HIGHEST_ID_FILE = ".highest-id"
TEMPORARY = re.compile(r"\.tmp-[^/]*\.part")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# Opening a FIFO planted under a note's name would wait for a writer for ever; non-blocking, it
# opens at once and is then refused as not a regular file. (No effect on regular files.)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_UMASK = os.umask(0o022)  # read the process umask once (setting it back at once)
os.umask(_UMASK)


def write_atomic(path: Union[str, Path], text: str) -> None:
    """Replace `path` with `text` (UTF-8) so that a crash leaves the old file or the new one:
    write a temporary file next to it, flush it to disk, then rename it over the target."""
    path = Path(path)
    data = text.encode("utf-8")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the file ordinary permissions
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable; not every platform lets a directory be fsynced
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


def file_key(st: os.stat_result) -> str:
    """What identifies one version of a file: inode, size, and the modification and change
    times. Any write changes the times (and the change time cannot be set back by hand)."""
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{stat.S_IFMT(st.st_mode)}"


def folder_key(folder: Union[str, Path]) -> str:
    """The folder's own key: it changes whenever a file in it is created, renamed or removed."""
    return file_key(os.stat(folder))


def read_note_file(folder: Union[str, Path], note_id: str) -> tuple[str, Note]:
    """(file key, Note) of one note file. Refuses symbolic links, so a link planted in the
    folder cannot make the tool read a file elsewhere. Raises NoteNotFound if the file is gone
    and NoteFormatError, naming the file, if it cannot be read as a note."""
    path = os.path.join(folder, check_note_id(note_id) + ".md")
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except FileNotFoundError:
        raise NoteNotFound(f"no note {note_id}") from None
    except OSError as exc:
        raise NoteFormatError(f"{note_id}.md cannot be opened safely ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise NoteFormatError(f"{note_id}.md is not a regular file")
        raw = f.read()
    key = file_key(st)
    try:
        note = parse_note(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise NoteFormatError(f"{note_id}.md is not UTF-8 text") from None
    except NoteFormatError as exc:
        raise NoteFormatError(f"{note_id}.md: {exc}") from None
    if note.id != note_id:
        raise NoteFormatError(f"{note_id}.md says its id is {note.id}")
    return key, note


def lstat_key(folder: Union[str, Path], note_id: str) -> str | None:
    """The key of a note file as it is now (None if it is gone), without reading it."""
    try:
        return file_key(os.lstat(os.path.join(folder, note_id + ".md")))
    except FileNotFoundError:
        return None


def remove_leftovers(folder: Union[str, Path], names) -> list[str]:
    """Remove temporary files a killed writer left behind (call only while holding the folder
    lock, when no write of ours is in progress). Returns the names removed."""
    removed = []
    for name in names:
        if TEMPORARY.fullmatch(name):
            try:
                os.unlink(os.path.join(folder, name))
                removed.append(name)
            except FileNotFoundError:
                pass
    return removed


# --------------------------------------------------------------------------- ids taken for ever

def tombstone_dir(folder: Union[str, Path]) -> Path:
    tombs = Path(folder) / TOMBSTONES
    if tombs.is_symlink():
        raise NoteFormatError(f"{tombs} is a symbolic link; refusing to write through it")
    return tombs


def has_tombstone(folder: Union[str, Path], note_id: str) -> bool:
    return os.path.lexists(os.path.join(folder, TOMBSTONES, check_note_id(note_id)))


def make_tombstone(folder: Union[str, Path], note_id: str) -> None:
    """An empty file `.deleted/<id>`: the id stays taken even if every index is lost."""
    tombs = tombstone_dir(folder)
    tombs.mkdir(exist_ok=True)
    os.close(os.open(tombs / check_note_id(note_id), os.O_WRONLY | os.O_CREAT | _NOFOLLOW, 0o644))


def tombstone_ids(folder: Union[str, Path]) -> set[str]:
    tombs = Path(folder) / TOMBSTONES
    if not tombs.is_dir() or tombs.is_symlink():
        return set()
    return {name for name in os.listdir(tombs) if NOTE_ID.fullmatch(name)}


def _open_own(path: str, flags: int) -> int | None:
    """A file descriptor for `path` if it is a regular file with no other name, else None (a
    symbolic link, a folder, a FIFO, a hard link to a file elsewhere: nothing of ours)."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK, 0o644)
    except OSError:  # ELOOP for a link, EISDIR for a folder, ENXIO for a FIFO...
        return None
    st = os.fstat(fd)
    if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
        return fd
    os.close(fd)
    return None


def read_highest(folder: Union[str, Path]) -> int:
    """The highest id number written to `.highest-id` (0 if there is none, or it is damaged
    or not a file of ours: the index, the tombstones and the notes still know the ids)."""
    fd = _open_own(os.path.join(folder, HIGHEST_ID_FILE), os.O_RDONLY)
    if fd is None:
        return 0
    with os.fdopen(fd, "rb") as f:
        text = f.read(64).strip()
    return int(text) if text.isdigit() else 0


def write_highest(folder: Union[str, Path], number: int) -> None:
    """Record the highest id number given out. A plain write, not flushed to disk: the note
    file written next carries the number durably; this file keeps it when that note is later
    removed by hand and the index is lost too. Whatever else is found under its name is
    removed first and the file made again; a folder with things in it is reported."""
    path = os.path.join(folder, HIGHEST_ID_FILE)
    fd = _open_own(path, os.O_WRONLY | os.O_CREAT)
    if fd is None:
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                os.rmdir(path)
            else:
                os.unlink(path)
        except OSError as exc:
            raise NoteError(f"{path} is not a file of NoteTool's and cannot be removed "
                            f"({exc.strerror}); remove it by hand") from None
        fd = _open_own(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        if fd is None:
            raise NoteError(f"{path} could not be made again as a file; remove whatever is there")
    try:
        data = f"{number}\n".encode()
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)
