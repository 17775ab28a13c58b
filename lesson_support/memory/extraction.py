"""Extraction: a finished session's transcript turned into memory records.

The teaching model's rule (course/llm/memory.py, documented there) finds the candidates; this
module gives each its source (session, message), time and kind, and `extract_and_filter` puts
the refusal filter (solutions.memory.filter_records) between extraction and the store.
"""
from __future__ import annotations

from course.givens.memory import MemoryRecord, Session
from course.llm.memory import extract_memories
from solutions.memory import filter_records


def extract(session: Session) -> list[MemoryRecord]:
    """Every candidate memory of `session`, unfiltered (it may hold a password: filter it)."""
    return [MemoryRecord(session.user, c["kind"], c["key"], c["value"], c["text"], session.id,
                         c["message"], session.time, single=c["single"])
            for c in extract_memories(session.messages)]


def extract_and_filter(session: Session):
    """(kept, refused): the candidates the user's memory may keep, and those refused with why."""
    return filter_records(extract(session), session.user)
