"""Chapter 06: NoteTool, durable structured notes kept outside the context window.

A note is one Markdown file, `<id>.md`, that starts with a YAML front matter block:

    ---
    id: note-0003
    title: 链接时 undefined reference to inflate
    type: blocker
    tags: [link, zlib]
    created_at: '2025-03-03T09:40:00+08:00'
    updated_at: '2025-03-03T09:40:00+08:00'
    ---
    <the content, byte for byte as it was given>

The building blocks are plain functions (the lab's exercises): `check_note_id`, `render_note`
/ `parse_note` (a round trip that is exact for any title and content), `search_notes`
(Chinese and English, ranked by relevance then recency) and `write_atomic`. `NoteTool` puts
them together with an index and a lock:

- `index.json` lists every note's metadata, the next id, and any note file it could not read.
  It is a cache: when it is missing, corrupt or disagrees with the note files, it is rebuilt
  from them.
- ids are `note-0001`, `note-0002`... and are never reused: deleting a note leaves an empty
  tombstone in `.deleted/`, and the next id is always above every id ever seen.
- every write goes to a temporary file that is then renamed over the old one, so a crash
  leaves either the old note or the new one, never half of one.
- every operation holds an exclusive `flock` on the notes folder, so two processes writing at
  once are serialised and lose nothing. (fcntl locks need Linux or macOS.)
"""
from __future__ import annotations

import fcntl
import heapq
import json
import os
import re
import stat
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, Union

import yaml

from solutions.gssc import Packet, as_datetime, overlap, query_terms, terms

NOTE_TYPES = ("task_state", "conclusion", "blocker", "action", "reference", "general")
ACTIONS = ("create", "read", "update", "search", "list", "summary", "delete")
INDEX_FILE = "index.json"
TOMBSTONES = ".deleted"
_ID = re.compile(r"note-[0-9]{4,12}")
_FILE = re.compile(r"(note-[0-9]{4,12})\.md")
_FIELDS = ("id", "title", "type", "tags", "created_at", "updated_at")
_UMASK = os.umask(0o022)  # read the process umask once (setting it back at once)
os.umask(_UMASK)
# Safe YAML loaders: PyYAML's own, plus its much faster libyaml binding when installed (used
# for reading). What we write is checked with both, so any machine reads it back the same.
_SAFE_LOADERS = (yaml.SafeLoader,) + ((yaml.CSafeLoader,) if hasattr(yaml, "CSafeLoader") else ())

# How notes enter a GSSC context: which section, and how much more they are worth.
NOTE_SECTION = {
    "task_state": "State", "blocker": "State", "action": "State",
    "conclusion": "Evidence", "reference": "Evidence", "general": "Context",
}
NOTE_PRIORITY = {"blocker": 1.5}  # an open problem must not be crowded out; others 1.0


class NoteError(Exception):
    """Something about a note or a request is wrong; the message says what."""


class InvalidNoteId(NoteError, ValueError):
    pass


class NoteNotFound(NoteError, LookupError):
    pass


class NoteFormatError(NoteError, ValueError):
    pass


# --------------------------------------------------------------------------- the note itself


def _utf8_text(value: Any, what: str, allow_empty: bool = True) -> str:
    if not isinstance(value, str):
        raise NoteError(f"{what} must be a string, not {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise NoteError(f"{what} must not be empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise NoteError(f"{what} contains characters that cannot be stored as UTF-8") from None
    return value


def _check_type(note_type: Any) -> str:
    if note_type not in NOTE_TYPES:
        raise NoteError(f"note type must be one of {', '.join(NOTE_TYPES)}; got {note_type!r}")
    return note_type


def _check_tags(tags: Any) -> tuple[str, ...]:
    if isinstance(tags, str) or not isinstance(tags, (list, tuple)):
        raise NoteError(f"tags must be a list of strings, not {type(tags).__name__}")
    clean: list[str] = []
    for tag in tags:
        tag = _utf8_text(tag, "a tag", allow_empty=False)
        if "\n" in tag or "\r" in tag or len(tag) > 100:
            raise NoteError(f"a tag must be one line of at most 100 characters: {tag[:40]!r}")
        if tag not in clean:
            clean.append(tag)
    return tuple(clean)


def _check_time(value: Any, what: str) -> datetime:
    """Chapter 03's timestamp rules (ISO strings, naive means UTC), as a note format error."""
    try:
        return as_datetime(value)
    except (ValueError, TypeError) as exc:
        raise NoteFormatError(f"{what}: {exc}") from None


@dataclass(frozen=True)
class Note:
    id: str
    title: str
    type: str
    tags: tuple[str, ...]
    created_at: datetime
    updated_at: datetime
    content: str = ""

    def __post_init__(self):
        check_note_id(self.id)
        _utf8_text(self.title, "title", allow_empty=False)
        _utf8_text(self.content, "content")
        _check_type(self.type)
        object.__setattr__(self, "tags", _check_tags(self.tags))
        object.__setattr__(self, "created_at", _check_time(self.created_at, "created_at"))
        object.__setattr__(self, "updated_at", _check_time(self.updated_at, "updated_at"))

    def front_matter(self) -> dict:
        """The YAML front matter fields, in their fixed order, times as ISO strings."""
        return {"id": self.id, "title": self.title, "type": self.type, "tags": list(self.tags),
                "created_at": self.created_at.isoformat(), "updated_at": self.updated_at.isoformat()}

    @cached_property
    def terms(self) -> frozenset:
        """Search terms of the title, tags and content (computed once per Note object)."""
        return frozenset(terms("\n".join([self.title, " ".join(self.tags), self.content])))


def check_note_id(note_id: Any) -> str:
    """Return the id if it is a well-formed note id (`note-` and 4 to 12 digits), else raise
    InvalidNoteId. Nothing else can become a file name, so no id can point outside the folder."""
    if not isinstance(note_id, str):
        raise InvalidNoteId(f"a note id must be a string, not {type(note_id).__name__}")
    if not _ID.fullmatch(note_id):
        shown = note_id if len(note_id) <= 40 else note_id[:40] + "..."
        raise InvalidNoteId(f"invalid note id {shown!r}: expected 'note-' followed by 4 to 12 digits")
    return note_id


def note_path(folder: Union[str, Path], note_id: str) -> Path:
    """The file of a note inside `folder`; a hostile id raises InvalidNoteId. (A valid id is
    only 'note-' and digits: no separator, no '..', so the file is always directly inside.)"""
    return Path(folder) / f"{check_note_id(note_id)}.md"


def _front_matter_text(meta: dict) -> str:
    """YAML for the front matter that is proven to read back as `meta`.

    PyYAML's readable plain and single-quoted styles lose some characters (a NEL, U+0085, is a
    line break to YAML and comes back as a space), so the text is checked by loading it again;
    if it does not come back equal, every string is written double-quoted, with escapes.
    The block must also never contain a line that is exactly '---' or '...' (the end markers).
    """
    for style in (None, '"'):
        text = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, default_flow_style=None,
                              width=1_000_000, default_style=style)
        if (all(yaml.load(text, Loader=loader) == meta for loader in _SAFE_LOADERS)
                and not any(line in ("---", "...") for line in text.split("\n"))):
            return text
    raise NoteFormatError("this front matter cannot be written so that it reads back the same")


def render_note(note: Note) -> str:
    """The note's file text: '---', the YAML front matter, '---', then the content verbatim."""
    return f"---\n{_front_matter_text(note.front_matter())}---\n{note.content}"


def parse_note(text: str) -> Note:
    """The Note in a note file's text (the inverse of `render_note`)."""
    if not text.startswith("---\n"):
        raise NoteFormatError("a note file must start with a '---' line (YAML front matter)")
    end = text.find("\n---\n", 3)
    if end < 0:
        raise NoteFormatError("the YAML front matter is never closed by a '---' line")
    try:
        meta = yaml.load(text[4:end + 1], Loader=_SAFE_LOADERS[-1])
    except yaml.YAMLError as exc:
        raise NoteFormatError(f"the YAML front matter does not parse: {exc}") from None
    if not isinstance(meta, dict):
        raise NoteFormatError("the YAML front matter must be a mapping of fields")
    missing = [k for k in _FIELDS if k not in meta]
    if missing:
        raise NoteFormatError(f"the front matter is missing {', '.join(missing)}")
    extra = sorted(str(k) for k in meta if k not in _FIELDS)
    if extra:
        raise NoteFormatError(f"the front matter has unknown fields: {', '.join(extra)}")
    if not isinstance(meta["tags"], list):
        raise NoteFormatError("tags in the front matter must be a list")
    try:
        return Note(content=text[end + 5:], **meta)
    except NoteFormatError:
        raise
    except NoteError as exc:
        raise NoteFormatError(f"bad front matter: {exc}") from None


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


def search_notes(notes: Iterable[Note], query: str, limit: int = 10) -> list[Note]:
    """Notes matching `query`, best first: by relevance (share of the query's terms found in
    title, tags and content; Chinese by character pairs), then newest update, then newest id.
    Notes that match nothing are left out."""
    if not isinstance(limit, int) or limit < 0:
        raise NoteError(f"limit must be a whole number >= 0, got {limit!r}")
    wanted = query_terms(_utf8_text(query, "query"))
    hits = [(rel, n) for n in notes if (rel := overlap(wanted, n.terms)) > 0]
    # Only the best `limit` are wanted: a bounded heap instead of sorting every hit.
    best = heapq.nsmallest(limit, hits, key=lambda h: (-h[0], -h[1].updated_at.timestamp(),
                                                       -_id_number(h[1].id)))
    return [n for _, n in best]


def _id_number(note_id: str) -> int:
    return int(note_id.split("-", 1)[1])


def note_to_packet(note: Note) -> Packet:
    """A note as a GSSC packet: state-like notes go to [State], findings to [Evidence],
    general notes to [Context]; blockers carry a higher priority."""
    head = f"{note.title} [{note.type} {note.id}]"
    body = note.content.strip()
    return Packet(
        content=f"{head}\n{body}" if body else head,
        source="notes",
        timestamp=note.updated_at,
        section=NOTE_SECTION[note.type],
        priority=NOTE_PRIORITY.get(note.type, 1.0),
        metadata={"note_id": note.id, "note_type": note.type, "tags": list(note.tags)},
    )


def notes_to_packets(notes: Iterable[Note]) -> list[Packet]:
    return [note_to_packet(n) for n in notes]


# --------------------------------------------------------------------------- the tool


def _utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


class NoteTool:
    """Notes in one folder: create, read, update, search, list, summary, delete.

        tool = NoteTool("project_notes")
        note = tool.create("zlib missing", "Could NOT find ZLIB ...", type="blocker", tags=["zlib"])
        tool.search("找不到 zlib")

    `clock` returns the time stamped on notes (default: now, UTC, whole seconds); lessons pass
    a fixed clock so their output is reproducible. `problems` lists note files that could not
    be read while rebuilding the index (they are left untouched).
    """

    def __init__(self, folder: Union[str, Path], clock: Callable[[], datetime] | None = None):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._dir = str(self.folder)
        self.clock = clock or _utc_now
        self.problems: list[str] = []
        self._index: dict = {"format": 1, "next_id": 1, "notes": {}, "unreadable": {}}
        self._seen: tuple | None = None  # (index stat, folder stat) when the index was last read
        self._cache: dict[str, tuple[tuple, Note]] = {}  # id -> (file stat, parsed note)
        self._thread_lock = threading.Lock()

    # ----------------------------------------------------------------- locking and the index

    @contextmanager
    def _locked(self):
        with self._thread_lock:
            fd = os.open(self.folder, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd is closed
                self._sync()
                yield
            finally:
                os.close(fd)

    def _stat_key(self) -> tuple:
        def key(path: Path):
            try:
                st = os.stat(path)
            except FileNotFoundError:
                return None
            return (st.st_ino, st.st_size, st.st_mtime_ns)
        return key(self.folder / INDEX_FILE), key(self.folder)

    def _note_ids_on_disk(self) -> set[str]:
        return {m.group(1) for name in os.listdir(self.folder) if (m := _FILE.fullmatch(name))}

    def _tombstone_ids(self) -> set[str]:
        tombs = self.folder / TOMBSTONES
        if not tombs.is_dir() or tombs.is_symlink():
            return set()
        return {name for name in os.listdir(tombs) if _ID.fullmatch(name)}

    def _sync(self) -> None:
        """Load the index if it changed on disk; rebuild it if it is missing, corrupt or stale."""
        key = self._stat_key()
        if key == self._seen:
            return
        try:
            data = json.loads((self.folder / INDEX_FILE).read_text(encoding="utf-8"))
            self._validate_index(data)
        except FileNotFoundError:
            self._rebuild()
            return
        except (ValueError, TypeError, KeyError, NoteError):
            self._rebuild()
            return
        if set(data["notes"]) | set(data["unreadable"]) != self._note_ids_on_disk():
            self._rebuild()  # a note file appeared or vanished behind the index's back
            return
        self._index = data
        self.problems = list(data["unreadable"].values())
        self._seen = key

    @staticmethod
    def _validate_index(data: Any) -> None:
        if not isinstance(data, dict) or data.get("format") != 1:
            raise ValueError("not a format-1 index")
        if (not isinstance(data.get("next_id"), int) or not isinstance(data.get("notes"), dict)
                or not isinstance(data.get("unreadable"), dict)):
            raise ValueError("index lacks next_id, notes or unreadable")
        for note_id in [*data["notes"], *data["unreadable"]]:
            check_note_id(note_id)
            if _id_number(note_id) >= data["next_id"]:
                raise ValueError("next_id is not above every id")
        for note_id, meta in data["notes"].items():
            ok = (isinstance(meta, dict) and meta.get("type") in NOTE_TYPES
                  and isinstance(meta.get("title"), str) and isinstance(meta.get("tags"), list)
                  and all(isinstance(t, str) for t in meta["tags"])
                  and all(isinstance(meta.get(k), str) for k in ("created_at", "updated_at")))
            if not ok:
                raise ValueError(f"bad index entry for {note_id}")

    def _rebuild(self) -> None:
        """Recreate the index from the note files (the truth). Unreadable files are left alone,
        listed in the index's "unreadable" (and in `problems`), and their ids stay taken."""
        notes, unreadable = {}, {}
        on_disk = self._note_ids_on_disk()
        for note_id in sorted(on_disk, key=_id_number):
            try:
                notes[note_id] = self._meta(self._load(note_id))
            except NoteError as exc:  # its message names the file
                unreadable[note_id] = str(exc)
            except OSError as exc:
                unreadable[note_id] = f"{note_id}.md: {exc}"
        taken = on_disk | self._tombstone_ids()
        next_id = max([_id_number(i) for i in taken] + [self._index.get("next_id", 1) - 1]) + 1
        self._index = {"format": 1, "next_id": next_id, "notes": notes, "unreadable": unreadable}
        self.problems = list(unreadable.values())
        self._save_index()

    @staticmethod
    def _meta(note: Note) -> dict:
        meta = note.front_matter()
        del meta["id"]
        return meta

    def _save_index(self) -> None:
        text = json.dumps(self._index, ensure_ascii=False, sort_keys=True, indent=1) + "\n"
        write_atomic(self.folder / INDEX_FILE, text)
        self._seen = self._stat_key()

    def _load(self, note_id: str) -> Note:
        """Read and parse one note file (cached until the file changes). Refuses symlinks, so
        a link planted in the folder cannot make the tool read a file elsewhere."""
        path = os.path.join(self._dir, check_note_id(note_id) + ".md")  # str: pathlib is slow here
        cached = self._cache.get(note_id)
        if cached:  # one lstat tells whether the file is still the one we parsed
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                raise NoteNotFound(f"no note {note_id}") from None
            if cached[0] == (st.st_ino, st.st_size, st.st_mtime_ns) and stat.S_ISREG(st.st_mode):
                return cached[1]
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            raise NoteNotFound(f"no note {note_id}") from None
        except OSError as exc:
            raise NoteFormatError(f"{note_id}.md cannot be opened safely ({exc.strerror})") from None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            key = (st.st_ino, st.st_size, st.st_mtime_ns)
            raw = f.read()
        try:
            note = parse_note(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise NoteFormatError(f"{note_id}.md is not UTF-8 text") from None
        except NoteFormatError as exc:
            raise NoteFormatError(f"{note_id}.md: {exc}") from None
        if note.id != note_id:
            raise NoteFormatError(f"{note_id}.md says its id is {note.id}")
        self._cache[note_id] = (key, note)
        return note

    def _store(self, note: Note) -> None:
        write_atomic(note_path(self.folder, note.id), render_note(note))
        self._index["notes"][note.id] = self._meta(note)
        self._save_index()

    def _now(self) -> datetime:
        return _check_time(self.clock(), "the clock's time")

    def _matching(self, type: str | None, tags: Sequence[str] | None) -> list[str]:
        """Ids whose index entry has the type and every one of the tags asked for."""
        if type is not None:
            _check_type(type)
        wanted = set(_check_tags(tags)) if tags is not None else set()
        return [i for i, m in self._index["notes"].items()
                if (type is None or m["type"] == type) and wanted <= set(m["tags"])]

    @staticmethod
    def _newest_first(notes: Iterable[Note]) -> list[Note]:
        return sorted(notes, key=lambda n: (-n.updated_at.timestamp(), -_id_number(n.id)))

    # ----------------------------------------------------------------- the seven actions

    def create(self, title: str, content: str = "", type: str = "general",
               tags: Sequence[str] = ()) -> Note:
        with self._locked():
            now = self._now()
            number = self._index["next_id"]
            while (note_path(self.folder, f"note-{number:04d}").exists()
                   or f"note-{number:04d}" in self._tombstone_ids()):
                number += 1  # only if someone put files there behind the index's back
            note = Note(f"note-{number:04d}", title, type, _check_tags(tags), now, now, content)
            self._index["next_id"] = number + 1
            self._store(note)
            return note

    def read(self, note_id: str) -> Note:
        check_note_id(note_id)
        with self._locked():
            if note_id not in self._index["notes"]:
                if note_id in self._tombstone_ids():
                    raise NoteNotFound(f"note {note_id} was deleted")
                raise NoteNotFound(f"no note {note_id}")
            return self._load(note_id)

    def update(self, note_id: str, *, title: str | None = None, content: str | None = None,
               type: str | None = None, tags: Sequence[str] | None = None) -> Note:
        """Change the fields given (None leaves a field as it is) and stamp updated_at."""
        check_note_id(note_id)
        with self._locked():
            if note_id not in self._index["notes"]:
                raise NoteNotFound(f"no note {note_id}")
            old = self._load(note_id)
            changes: dict[str, Any] = {"updated_at": self._now()}
            if title is not None:
                changes["title"] = title
            if content is not None:
                changes["content"] = content
            if type is not None:
                changes["type"] = type
            if tags is not None:
                changes["tags"] = _check_tags(tags)
            note = replace(old, **changes)  # validates like a new note
            self._store(note)
            return note

    def delete(self, note_id: str) -> Note:
        """Remove a note; its id stays taken for ever (a tombstone in .deleted/)."""
        check_note_id(note_id)
        with self._locked():
            if note_id not in self._index["notes"]:
                raise NoteNotFound(f"no note {note_id}")
            note = self._load(note_id)
            tombs = self.folder / TOMBSTONES
            if tombs.is_symlink():
                raise NoteError(f"{tombs} is a symbolic link; refusing to write through it")
            tombs.mkdir(exist_ok=True)
            # Tombstone first: if we crash after it, the id is still never reused.
            os.close(os.open(tombs / note_id, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644))
            os.unlink(note_path(self.folder, note_id))
            del self._index["notes"][note_id]
            self._cache.pop(note_id, None)
            self._save_index()
            return note

    def list(self, type: str | None = None, tags: Sequence[str] | None = None,
             limit: int | None = None) -> list[Note]:
        """Notes with that type and all those tags, most recently updated first."""
        with self._locked():
            notes = self._newest_first(self._load(i) for i in self._matching(type, tags))
        return notes if limit is None else notes[:limit]

    def search(self, query: str, limit: int = 10, type: str | None = None,
               tags: Sequence[str] | None = None) -> list[Note]:
        """Notes matching `query` (see `search_notes`), optionally filtered like `list`."""
        with self._locked():
            candidates = [self._load(i) for i in self._matching(type, tags)]
        return search_notes(candidates, query, limit)

    def summary(self) -> dict:
        """Counts by type and tag, the open blockers and the five latest notes."""
        with self._locked():
            metas = dict(self._index["notes"])
        by_type = {t: 0 for t in NOTE_TYPES}
        tag_counts: dict[str, int] = {}
        for meta in metas.values():
            by_type[meta["type"]] += 1
            for tag in meta["tags"]:
                tag_counts[tag] = tag_counts.get(tag, 0) + 1

        def newest(items):
            return sorted(items, key=lambda kv: (-_check_time(kv[1]["updated_at"], "").timestamp(),
                                                 -_id_number(kv[0])))

        def brief(note_id, meta):
            return {"id": note_id, "title": meta["title"], "type": meta["type"],
                    "updated_at": meta["updated_at"]}

        return {
            "total": len(metas),
            "by_type": by_type,
            "tags": dict(sorted(tag_counts.items(), key=lambda kv: (-kv[1], kv[0]))),
            "blockers": [brief(i, m) for i, m in newest((i, m) for i, m in metas.items()
                                                         if m["type"] == "blocker")],
            "recent": [brief(i, m) for i, m in newest(metas.items())[:5]],
        }

    def rebuild_index(self) -> list[str]:
        """Rebuild index.json from the note files now; returns the problems found."""
        with self._locked():
            self._rebuild()
            return list(self.problems)

    # ----------------------------------------------------------------- as a source and a tool

    def as_source(self, limit: int = 8) -> Callable[[str], list[Packet]]:
        """A GSSC source: for a task, the notes that match it plus every open blocker."""
        def notes_for(task: str) -> list[Packet]:
            found = {n.id: n for n in self.search(task, limit=limit)}
            for blocker in self.list(type="blocker"):
                found.setdefault(blocker.id, blocker)
            return notes_to_packets(found[i] for i in sorted(found, key=_id_number))
        return notes_for

    def run(self, arguments: Mapping[str, Any]) -> dict:
        """Tool-call entry point: {"action": ..., ...} in, a JSON-ready dict out.
        Bad input never raises; it comes back as {"ok": False, "error": "..."}."""
        try:
            return {"ok": True, **self._dispatch(dict(arguments))}
        except (NoteError, TypeError, ValueError) as exc:
            return {"ok": False, "error": str(exc)}

    def _dispatch(self, args: dict) -> dict:
        action = args.pop("action", None)
        if action not in ACTIONS:
            raise NoteError(f"action must be one of {', '.join(ACTIONS)}; got {action!r}")
        allowed = {
            "create": {"title", "content", "type", "tags"},
            "read": {"note_id"}, "delete": {"note_id"},
            "update": {"note_id", "title", "content", "type", "tags"},
            "search": {"query", "limit", "type", "tags"},
            "list": {"type", "tags", "limit"}, "summary": set(),
        }[action]
        unknown = sorted(set(args) - allowed)
        if unknown:
            raise NoteError(f"{action} does not take {', '.join(unknown)}")
        if action == "summary":
            return {"summary": self.summary()}
        if action in ("search", "list"):
            notes = getattr(self, action)(**args)
            return {"notes": [_as_json(n, with_content=action == "search") for n in notes]}
        if action == "create":
            return {"note": _as_json(self.create(**args))}
        note_id = args.pop("note_id", None)
        return {"note": _as_json(getattr(self, action)(note_id, **args))}


def _as_json(note: Note, with_content: bool = True) -> dict:
    data = note.front_matter()
    if with_content:
        data["content"] = note.content
    return data


TOOL_SPEC = {
    "type": "function",
    "function": {
        "name": "notes",
        "description": "Durable structured notes kept outside the conversation: record task "
                       "state, conclusions, blockers and next actions; search them later.",
        "parameters": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": list(ACTIONS)},
                "note_id": {"type": "string", "description": "e.g. note-0003 (read/update/delete)"},
                "title": {"type": "string"},
                "content": {"type": "string", "description": "Markdown body"},
                "type": {"type": "string", "enum": list(NOTE_TYPES)},
                "tags": {"type": "array", "items": {"type": "string"}},
                "query": {"type": "string", "description": "search words, Chinese or English"},
                "limit": {"type": "integer", "minimum": 0},
            },
            "required": ["action"],
        },
    },
}


# --------------------------------------------------------------------------- scenario fixtures


def replay_scenario(path: Union[str, Path], folder: Union[str, Path],
                    until: Union[datetime, str, None] = None) -> NoteTool:
    """Replay a scenario file (data/notes/*.json) into `folder`: each step runs one action at
    the time given in its "at" field; with `until`, only the steps up to that time. Returns the
    tool, its clock left at the last step replayed."""
    scenario = json.loads(Path(path).read_text(encoding="utf-8"))
    limit = _check_time(until, "until") if until is not None else None
    moments: list[datetime] = []
    tool = NoteTool(folder, clock=lambda: moments[-1] if moments else limit or _utc_now())
    for step in scenario["steps"]:
        step = dict(step)
        at = _check_time(step.pop("at"), "step time")
        if moments and at < moments[-1]:
            raise NoteError(f"scenario steps must be in time order: {at.isoformat()} comes after "
                            f"{moments[-1].isoformat()}")
        if limit is not None and at > limit:
            break
        moments.append(at)
        result = tool.run(step)
        if not result["ok"]:
            raise NoteError(f"scenario step {step} failed: {result['error']}")
    return tool
