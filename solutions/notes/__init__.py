"""Chapter 06: NoteTool, durable structured notes kept outside the context window.

Notes are for people, the index is for the machine:

    format.py    the Note, its id rules, and the Markdown + YAML file format (exact round trip)
    files.py     the folder on disk: atomic writes, safe reads, tombstones, the highest id
    search.py    search_notes, the ranking every search follows (Chinese and English)
    index.py     the SQLite index: a cache of the files that makes every action cheap
    watch.py     which files changed since the last call (Linux inotify)
    sync.py      the folder and its index kept in step, under a lock: the files win
    tool.py      NoteTool: the seven actions
    adapters.py  notes as GSSC packets (Chapter 03) and the tool-call entry point

The lab's exercises are `check_note_id`, `render_note`, `parse_note`, `search_notes` and
`write_atomic`.
Every public name is importable from `solutions.notes`.
"""
from solutions.notes.adapters import ACTIONS, TOOL_SPEC, note_to_packet
from solutions.notes.files import HIGHEST_ID_FILE, read_note_file, write_atomic
from course.givens.notes import (NOTE_TYPES, InvalidNoteId, Note, NoteError, NoteFormatError,
                                 NoteNotFound)
from solutions.notes.format import check_note_id, id_number, note_path, parse_note, render_note
from solutions.notes.index import INDEX_DIR
from solutions.notes.search import search_notes
from solutions.notes.tool import NoteTool, utc_now
from solutions.notes.self_test import self_test

__all__ = [
    "ACTIONS", "HIGHEST_ID_FILE", "INDEX_DIR", "InvalidNoteId", "NOTE_TYPES", "Note", "NoteError",
    "NoteFormatError", "NoteNotFound", "NoteTool", "TOOL_SPEC", "check_note_id", "id_number",
    "note_path", "note_to_packet", "parse_note", "read_note_file", "render_note", "search_notes",
    "self_test", "utc_now", "write_atomic",
]
