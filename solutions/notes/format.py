"""The note's id rules and its file format (a round trip that is exact for any title and
content). The `Note` type, its fields and errors are givens (course.givens.notes).

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

from pathlib import Path
from typing import Any, Union

import yaml

from course.givens.notes import FIELDS, NOTE_ID, InvalidNoteId, Note, NoteError, NoteFormatError

# Safe YAML loaders: PyYAML's own, plus its much faster libyaml binding when installed (used
# for reading). What we write is checked with both, so any machine reads it back the same.
_SAFE_LOADERS = (yaml.SafeLoader,) + ((yaml.CSafeLoader,) if hasattr(yaml, "CSafeLoader") else ())


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
