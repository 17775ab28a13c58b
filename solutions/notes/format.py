"""The note itself: the `Note` type, its id rules, and the file format (a round trip that is
exact for any title and content).

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
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Union

import yaml

from solutions.gssc import as_datetime, terms

NOTE_TYPES = ("task_state", "conclusion", "blocker", "action", "reference", "general")
FIELDS = ("id", "title", "type", "tags", "created_at", "updated_at")
NOTE_ID = re.compile(r"note-[0-9]{4,12}")
NOTE_FILE = re.compile(r"(note-[0-9]{4,12})\.md")
# Safe YAML loaders: PyYAML's own, plus its much faster libyaml binding when installed (used
# for reading). What we write is checked with both, so any machine reads it back the same.
_SAFE_LOADERS = (yaml.SafeLoader,) + ((yaml.CSafeLoader,) if hasattr(yaml, "CSafeLoader") else ())


class NoteError(Exception):
    """Something about a note or a request is wrong; the message says what."""


class InvalidNoteId(NoteError, ValueError):
    pass


class NoteNotFound(NoteError, LookupError):
    pass


class NoteFormatError(NoteError, ValueError):
    pass


def utf8_text(value: Any, what: str, allow_empty: bool = True) -> str:
    if not isinstance(value, str):
        raise NoteError(f"{what} must be a string, not {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise NoteError(f"{what} must not be empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise NoteError(f"{what} contains characters that cannot be stored as UTF-8") from None
    return value


def check_type(note_type: Any) -> str:
    if note_type not in NOTE_TYPES:
        raise NoteError(f"note type must be one of {', '.join(NOTE_TYPES)}; got {note_type!r}")
    return note_type


def check_tags(tags: Any) -> tuple[str, ...]:
    if isinstance(tags, str) or not isinstance(tags, (list, tuple)):
        raise NoteError(f"tags must be a list of strings, not {type(tags).__name__}")
    clean: list[str] = []
    for tag in tags:
        tag = utf8_text(tag, "a tag", allow_empty=False)
        if "\n" in tag or "\r" in tag or len(tag) > 100:
            raise NoteError(f"a tag must be one line of at most 100 characters: {tag[:40]!r}")
        if tag not in clean:
            clean.append(tag)
    return tuple(clean)


def check_time(value: Any, what: str) -> datetime:
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
        utf8_text(self.title, "title", allow_empty=False)
        utf8_text(self.content, "content")
        check_type(self.type)
        object.__setattr__(self, "tags", check_tags(self.tags))
        object.__setattr__(self, "created_at", check_time(self.created_at, "created_at"))
        object.__setattr__(self, "updated_at", check_time(self.updated_at, "updated_at"))

    def front_matter(self) -> dict:
        """The YAML front matter fields, in their fixed order, times as ISO strings."""
        return {"id": self.id, "title": self.title, "type": self.type, "tags": list(self.tags),
                "created_at": self.created_at.isoformat(), "updated_at": self.updated_at.isoformat()}

    @cached_property
    def terms(self) -> frozenset:
        """Search terms of the title, tags and content (computed once per Note object)."""
        return frozenset(note_terms(self.title, self.tags, self.content))


def note_terms(title: str, tags, content: str) -> set[str]:
    """The search terms of a note's text: its title, tags and content (Chapter 03's terms)."""
    return terms("\n".join([title, " ".join(tags), content]))


def check_note_id(note_id: Any) -> str:
    """Return the id if it is a well-formed note id (`note-` and 4 to 12 digits), else raise
    InvalidNoteId. Nothing else can become a file name, so no id can point outside the folder."""
    if not isinstance(note_id, str):
        raise InvalidNoteId(f"a note id must be a string, not {type(note_id).__name__}")
    if not NOTE_ID.fullmatch(note_id):
        shown = note_id if len(note_id) <= 40 else note_id[:40] + "..."
        raise InvalidNoteId(f"invalid note id {shown!r}: expected 'note-' followed by 4 to 12 digits")
    return note_id


def id_number(note_id: str) -> int:
    """The number in a note id: 3 for note-0003."""
    return int(note_id.split("-", 1)[1])


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
    missing = [k for k in FIELDS if k not in meta]
    if missing:
        raise NoteFormatError(f"the front matter is missing {', '.join(missing)}")
    extra = sorted(str(k) for k in meta if k not in FIELDS)
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
