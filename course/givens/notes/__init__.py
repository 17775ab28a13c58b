"""Chapter 06's givens: what lab 06 hands the student and the answers build on, no answer among
them (lab 06 asks for `check_note_id`, `render_note`, `parse_note`, `search_notes` and
`write_atomic`; they are in `solutions.notes`).

    note     Note, its fields and types, the id pattern, the field checks, the errors
    samples  the committed notes folder and the lesson's scenario (data/notes/)
    crashes  os_calls and SimulatedCrash: record and interrupt os.fsync / os.replace, for the
             checks of write_atomic, in the student's kernel or the grader's worker alike
"""
from course.givens.notes.crashes import SimulatedCrash, os_calls, record_os_calls
from course.givens.notes.note import (FIELDS, NOTE_FILE, NOTE_ID, NOTE_TYPES, InvalidNoteId, Note,
                                      NoteError, NoteFormatError, NoteNotFound, check_tags,
                                      check_time, check_type, note_terms, utf8_text)
from course.givens.notes.samples import SAMPLE_FOLDER, SCENARIO

__all__ = [
    "FIELDS", "InvalidNoteId", "NOTE_FILE", "NOTE_ID", "NOTE_TYPES", "Note", "NoteError",
    "NoteFormatError", "NoteNotFound", "SAMPLE_FOLDER", "SCENARIO", "SimulatedCrash", "check_tags",
    "check_time", "check_type", "note_terms", "os_calls", "record_os_calls", "utf8_text",
]
