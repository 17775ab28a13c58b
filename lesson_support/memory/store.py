"""MemoryStore: memories kept as chapter 06's notes. The note files are the truth; every index
(chapter 06's, and this chapter's HybridIndex) is derived from them and can be rebuilt.

One memory is one note: its title the statement, its type the nearest of chapter 06's
(`NOTE_TYPE`), its tags "memory", "user:<id>", "kind:<kind>", "status:<status>" (so `list` and
`search` filter on them), and its content the statement followed by a fenced ```memory block of
JSON holding every field of the record: `note_to_record(record_to_note(r))` gives `r` back.
"""
from __future__ import annotations

import json
from dataclasses import asdict, fields, replace
from datetime import datetime
from pathlib import Path

from course.givens.memory import MemoryRecord, Session
from lesson_support.memory.extraction import extract_and_filter
from solutions.memory import consolidate
from solutions.notes import Note, NoteTool

NOTE_TYPE = {"fact": "reference", "preference": "general", "decision": "conclusion", "open_item": "action"}
FENCE = "```memory\n"
_TIMES = ("time", "valid_to", "last_used")


def metadata(record: MemoryRecord) -> dict:
    data = asdict(record)
    data.pop("id")
    for name in _TIMES:
        data[name] = data[name].isoformat() if data[name] else None
    data["conflicts"] = list(record.conflicts)
    return data


def record_tags(record: MemoryRecord) -> list[str]:
    return ["memory", f"user:{record.user}", f"kind:{record.kind}", f"status:{record.status}"]


def record_content(record: MemoryRecord) -> str:
    return f"{record.text}\n\n{FENCE}{json.dumps(metadata(record), ensure_ascii=False, sort_keys=True, indent=1)}\n```\n"


def note_to_record(note: Note) -> MemoryRecord:
    """The record a memory note holds (ValueError for a note that is not a memory)."""
    start = note.content.find(FENCE)
    end = note.content.rfind("\n```")
    if "memory" not in note.tags or start < 0 or end <= start:
        raise ValueError(f"{note.id} is not a memory note")
    data = json.loads(note.content[start + len(FENCE):end])
    for name in _TIMES:
        data[name] = datetime.fromisoformat(data[name]) if data[name] else None
    data["conflicts"] = tuple(data["conflicts"])
    known = {f.name for f in fields(MemoryRecord)}
    return MemoryRecord(**{k: v for k, v in data.items() if k in known}, id=note.id)


class MemoryStore:
    """Memories in one NoteTool folder. `clock` stamps the notes (lessons pass a fixed one)."""

    def __init__(self, folder, clock=None):
        self.folder = Path(folder)
        self.tool = NoteTool(self.folder, clock=clock)

    def records(self, user: str | None = None, current_only: bool = False) -> list[MemoryRecord]:
        """The stored memories, oldest first (by time, then id)."""
        tags = ["memory"] + ([f"user:{user}"] if user else []) + (["status:active"] if current_only else [])
        found = [note_to_record(n) for n in self.tool.list(tags=tags)]
        return sorted(found, key=lambda r: (r.time, r.id))

    def apply(self, records) -> list[MemoryRecord]:
        """Write a consolidation's result: records without a note id become notes, the others are
        updated where they changed; links to temporary ids ("m-3") are rewritten to note ids."""
        records = list(records)
        ids = {}
        for r in records:
            if not r.id.startswith("note-"):
                note = self.tool.create(r.text, record_content(r), NOTE_TYPE[r.kind], record_tags(r))
                ids[r.id] = note.id
        stored = {r.id: r for r in self.records()}
        final = []
        for r in records:
            r = replace(r, id=ids.get(r.id, r.id),
                        superseded_by=ids.get(r.superseded_by, r.superseded_by),
                        conflicts=tuple(ids.get(c, c) for c in r.conflicts))
            if stored.get(r.id) != r:
                self.tool.update(r.id, content=record_content(r), tags=record_tags(r))
            final.append(r)
        return final

    def remember(self, session: Session) -> dict:
        """After a session: extract, refuse what must not be kept, consolidate, write.
        Returns {"extracted", "refused", "stored"} counts."""
        kept, refused = extract_and_filter(session)
        old = self.records(session.user)
        self.apply(consolidate(old, kept))
        return {"extracted": len(kept) + len(refused), "refused": len(refused), "stored": len(kept)}
