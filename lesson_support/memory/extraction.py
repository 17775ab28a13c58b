"""Extraction: a finished session's transcript turned into memory records.

A model finds the candidates: asked through the openai SDK (`ask_for_memories`) with one request,
the same for every model: a system prompt saying what to keep, the transcript (one JSON object a
line) and `response_format`, the JSON schema "memory_records". The teaching model answers it with
its documented rule (course/llm/memory.py); a real model behind llama.cpp decodes under a grammar
made from the schema (course/local_model), so even a small one returns a list of records, right
or wrong. Without a client, `extract` applies the teaching model's rule here, in-process: the same
records its server returns, without a round trip (tested).

This module gives each candidate its source (session, message), time and kind, keeps only what a
user message said (a record citing another message is rejected, whatever the model), and
`extract_and_filter` puts the refusal filter (solutions.memory.filter_records) between extraction
and the store: whatever model extracts, code refuses secrets.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from course.givens.memory import MEMORY_KINDS, MemoryRecord, Session
from course.llm.memory import ACCUMULATING, RECORDS_SCHEMA, SCHEMA_NAME, extract_memories, transcript
from solutions.memory import filter_records

EXTRACTION_PROMPT = (
    "You keep a user's long-term memory. The conversation below has ended; it is given one message "
    "a line, as JSON with the message's number. List what is worth remembering about the user, "
    "taken only from what the user said (never from the assistant): facts (where they live, where "
    "they work, places they went), preferences (their editor, their morning drink), decisions with "
    "their reasons, and open items (things to do). For each give kind (fact, preference, decision "
    "or open_item), key (city, employer, editor, drink, trip, todo, decision:<topic>, or the "
    "user's own word), value (as short as possible), message (the number of the message it comes "
    "from) and text (that sentence, copied). Answer with JSON: {\"memories\": [...]}, an empty "
    "list when nothing is worth keeping.")
MAX_TOKENS = 1024   # room for a session's records; a reply cut by it is not JSON, and says so


@dataclass(frozen=True)
class Extraction:
    """What a model returned for one transcript: the candidates kept (the fields of
    `extract_memories`), those rejected with why, and the reply's text."""
    candidates: list
    rejected: list
    content: str


def request(messages, model: str) -> dict:
    """The chat-completion arguments that ask `model` for a transcript's memories."""
    return {"model": model, "temperature": 0, "max_tokens": MAX_TOKENS,
            "messages": [{"role": "system", "content": EXTRACTION_PROMPT},
                         {"role": "user", "content": transcript(messages)}],
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": RECORDS_SCHEMA}}}


def read_reply(content: str, messages) -> Extraction:
    """The reply's records checked against the transcript. ValueError if it is not the schema's
    JSON object; a record with a missing or wrong field, or citing a message the user did not
    write, is rejected (with why), the others kept."""
    try:
        memories = json.loads(content)["memories"]
        if not isinstance(memories, list):
            raise TypeError
    except (ValueError, TypeError, KeyError):
        raise ValueError(f"the reply is not {SCHEMA_NAME}'s JSON ({{\"memories\": [...]}}): "
                         f"{content[:200]!r}") from None
    kept, rejected = [], []
    for item in memories:
        why = _problem(item, messages)
        if why:
            rejected.append((item, why))
            continue
        key = " ".join(item["key"].split())
        kept.append({"kind": item["kind"], "key": key, "value": item["value"].strip(),
                     "single": key not in ACCUMULATING, "message": item["message"],
                     "text": item["text"].strip() or item["value"].strip()})
    return Extraction(kept, rejected, content)


def _problem(item, messages) -> str | None:
    if not isinstance(item, dict):
        return "not an object"
    if item.get("kind") not in MEMORY_KINDS:
        return f"kind is not one of {', '.join(MEMORY_KINDS)}"
    for name in ("key", "value", "text"):
        if not isinstance(item.get(name), str) or (name != "text" and not item[name].strip()):
            return f"{name} is not a non-empty string" if name != "text" else "text is not a string"
    index = item.get("message")
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(messages):
        return "message is not the number of a message of the transcript"
    if messages[index].get("role") != "user":
        return f"message {index} is not the user's"
    return None


def ask_for_memories(messages, client, model: str) -> Extraction:
    """Ask a model (an `openai.OpenAI` client) for the memories of a transcript."""
    reply = client.chat.completions.create(**request(messages, model))
    return read_reply(reply.choices[0].message.content or "", messages)


def extract(session: Session, client=None, model: str | None = None) -> list[MemoryRecord]:
    """Every candidate memory of `session`, unfiltered (it may hold a password: filter it), found by
    `model` through `client`, or by the teaching model's rule in-process when no client is given."""
    if client is None:
        candidates = extract_memories(session.messages)
    else:
        if not model:
            raise ValueError("extracting through a client needs the model's name")
        candidates = ask_for_memories(session.messages, client, model).candidates
    return records_of(session, candidates)


def records_of(session: Session, candidates) -> list[MemoryRecord]:
    """The candidates (the fields of `extract_memories`) as records of `session`."""
    return [MemoryRecord(session.user, c["kind"], c["key"], c["value"], c["text"], session.id,
                         c["message"], session.time, single=c["single"])
            for c in candidates]


def extract_and_filter(session: Session, client=None, model: str | None = None):
    """(kept, refused): the candidates the user's memory may keep, and those refused with why."""
    return filter_records(extract(session, client, model), session.user)
