"""The `Note` type: its fields, the rules every field follows, and the errors a note raises.

A note is one Markdown file, `<id>.md`, whose YAML front matter holds the six `FIELDS` in
order and whose content follows, byte for byte (the format is lab 06's `render_note` and
`parse_note`, in the answers). An id is `note-` and 4 to 12 ASCII digits (`NOTE_ID`): creating
a `Note` refuses any other, so no note can name a file outside its folder. The gate the tool
puts in front of every id it is given, with the reason, is lab 06's `check_note_id`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from course.givens.gssc import as_datetime
from course.givens.gssc.matching import terms

NOTE_TYPES = ("task_state", "conclusion", "blocker", "action", "reference", "general")
FIELDS = ("id", "title", "type", "tags", "created_at", "updated_at")
NOTE_ID = re.compile(r"note-[0-9]{4,12}")        # use with fullmatch: [0-9], not \d (٠١٢٣)
NOTE_FILE = re.compile(r"(note-[0-9]{4,12})\.md")


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
        if not isinstance(self.id, str) or not NOTE_ID.fullmatch(self.id):
            shown = repr(self.id)
            shown = shown if len(shown) <= 40 else shown[:40] + "..."
            raise InvalidNoteId(f"invalid note id {shown}: a note's id is 'note-' and 4 to 12 digits")
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
