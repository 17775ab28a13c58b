"""filter_records: what must never be stored, refused by code after extraction.

Three reasons, checked on the record's key, value and text:

- "credential": a password, PIN, token, API key, private key or card number, named or shaped
  (an `sk-...` key, a PEM header, 13-19 digits that pass the Luhn check);
- "secret": something the user marks as secret ("don't tell anyone", "保密");
- "other_person": another named person's private data (health, address, phone, salary, ...):
  the user may share it in the moment, but it is not theirs to keep in *their* memory.

The rule refuses; it never rewrites a record into a "safe" one, since a partial redaction would
still keep a credential's context.
"""
from __future__ import annotations

import re

from course.givens.memory import (CREDENTIAL_SHAPES, CREDENTIAL_WORDS, PRIVATE_WORDS, RELATIONS,
                                  SECRET_WORDS, MemoryRecord)

_DIGITS = re.compile(r"(?:\d[ -]?){13,19}")


def _luhn(digits: str) -> bool:
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def refusal_reason(record: MemoryRecord, owner: str) -> str | None:
    """Why `record` must not be stored in `owner`'s memory, or None when it may be."""
    text = " ".join((record.key, record.value, record.text))
    if CREDENTIAL_WORDS.search(record.key) or CREDENTIAL_SHAPES.search(text):
        return "credential"
    if any(_luhn(re.sub(r"\D", "", m)) for m in _DIGITS.findall(text)):
        return "credential"
    if SECRET_WORDS.search(text):
        return "secret"
    if record.user != owner:
        return "other_person"
    if RELATIONS.search(record.key) and PRIVATE_WORDS.search(f"{record.value} {record.text}"):
        return "other_person"
    return None


def filter_records(records, owner: str) -> tuple[list[MemoryRecord], list[tuple[MemoryRecord, str]]]:
    """Split extracted records into those `owner`'s memory may keep and those refused, each
    refused one with its reason; both lists keep the input's order."""
    kept, refused = [], []
    for record in records:
        reason = refusal_reason(record, owner)
        if reason is None:
            kept.append(record)
        else:
            refused.append((record, reason))
    return kept, refused
