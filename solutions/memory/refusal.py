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

from course.givens.memory import MemoryRecord

CREDENTIAL_WORDS = re.compile(
    r"password|passwd|passphrase|\bpin\b|api[ _-]?key|token|secret key|private key|credential|"
    r"credit card|card number|cvv|ssh key|密码|口令|密钥|令牌|信用卡|卡号", re.I)
CREDENTIAL_SHAPES = re.compile(
    r"\bsk-[A-Za-z0-9_-]{8,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bAKIA[0-9A-Z]{16}\b|\bxox[bap]-[A-Za-z0-9-]{10,}|"
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----|\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")
SECRET_WORDS = re.compile(r"don'?t tell anyone|keep (?:it|this) secret|confidential|保密|别告诉(?:任何人|别人)", re.I)
RELATIONS = re.compile(
    r"\b(?:colleague|friend|sister|brother|wife|husband|mother|father|boss|neighbou?r|son|daughter)\b|"
    r"同事|朋友|姐姐|妹妹|哥哥|弟弟|妻子|丈夫|妈妈|爸爸|老板|邻居|儿子|女儿", re.I)
PRIVATE_WORDS = re.compile(
    r"diabetes|cancer|pregnan|illness|disease|diagnos|therapy|medication|salary|earns|address|lives at|"
    r"phone|divorce|debt|糖尿病|癌|怀孕|生病|疾病|诊断|治疗|药|工资|薪水|收入|地址|住在|电话|离婚|欠债", re.I)
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
