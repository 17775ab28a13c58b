"""What Chapter 17 gives (memory across sessions): the memory record, a session, a recall question,
a forgetting policy, and the lab's sample data. No answers here: the lab's exercises are in
`solutions.memory`.

A memory record is one thing worth keeping after a conversation ends (a fact about the user or the
project, a preference, a decision and its reason, an open item), with where it came from (session
and message), when it was said, and its kind in CoALA's terms (chapter 06). A record that a newer
one replaces is kept, with the end of its validity (`valid_to`): the history of a preference is
itself worth remembering ("you used to prefer tabs").
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

MEMORY_KINDS = ("fact", "preference", "decision", "open_item")
# CoALA's long-term memories (chapter 06): what is true (semantic), what happened (episodic).
COALA = {"fact": "semantic", "preference": "semantic", "decision": "episodic", "open_item": "episodic"}
STATUSES = ("active", "superseded", "contradicted", "forgotten")
QUESTION_KINDS = ("single", "aggregate", "update", "time", "abstain")
IDK = "I don't know"
IDK_FORMS = ("i don't know", "i do not know", "不知道")

# What the refusal filter looks for (lab 17's filter_records; the reasons are REFUSAL_REASONS).
REFUSAL_REASONS = ("credential", "secret", "other_person")
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


def utc(year: int, month: int, day: int, hour: int = 12) -> datetime:
    return datetime(year, month, day, hour, tzinfo=timezone.utc)


@dataclass(frozen=True)
class MemoryRecord:
    """One memory. `key` is the slot it fills ("city", "editor", "trip"); a `single` key has one
    current value (a changed value supersedes the old one), a key that is not single accumulates
    values (every trip). `time` is when it was said, and the start of its validity."""
    user: str
    kind: str
    key: str
    value: str
    text: str
    session: str
    message: int
    time: datetime
    single: bool = True
    valid_to: datetime | None = None
    status: str = "active"
    superseded_by: str | None = None
    conflicts: tuple[str, ...] = ()
    uses: int = 0
    last_used: datetime | None = None
    id: str = ""

    def __post_init__(self):
        if self.kind not in MEMORY_KINDS:
            raise ValueError(f"a memory's kind is one of {', '.join(MEMORY_KINDS)}; got {self.kind!r}")
        if self.status not in STATUSES:
            raise ValueError(f"a memory's status is one of {', '.join(STATUSES)}; got {self.status!r}")
        for name in ("user", "key", "text", "session"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"a memory's {name} must be a non-empty string")
        if not isinstance(self.time, datetime) or self.time.tzinfo is None:
            raise ValueError("a memory's time must be a datetime with a time zone (UTC)")

    @property
    def valid_from(self) -> datetime:
        return self.time

    @property
    def current(self) -> bool:
        return self.status == "active"

    @property
    def coala(self) -> str:
        return COALA[self.kind]


@dataclass(frozen=True)
class Session:
    """One conversation of one user: its id ("u03-s2"), when it happened, its messages
    ({"role", "content"}, in order)."""
    id: str
    user: str
    time: datetime
    messages: tuple = ()


@dataclass(frozen=True)
class RecallQuestion:
    """A question asked after the sessions. A right answer contains every value of `answers`
    (an aggregate: all of them) and none of `stale` (a knowledge update: the old value); an
    `abstain` question has no answer in the history, and only "I don't know" is right."""
    id: str
    user: str
    kind: str
    text: str
    answers: tuple[str, ...]
    asked_at: datetime
    stale: tuple[str, ...] = ()

    def __post_init__(self):
        if self.kind not in QUESTION_KINDS:
            raise ValueError(f"a question's kind is one of {', '.join(QUESTION_KINDS)}; got {self.kind!r}")
        if (self.kind == "abstain") != (not self.answers):
            raise ValueError("an abstain question has no answers, and every other question has some")


@dataclass(frozen=True)
class ForgetPolicy:
    """When a memory is forgotten: older than `max_age_days` and used fewer than `min_uses`
    times, or not used for `idle_days`; None switches a rule off."""
    max_age_days: int | None = 365
    min_uses: int = 1
    idle_days: int | None = None


def record(user="u01", kind="fact", key="city", value="Lyon", text=None, session="u01-s1", message=0,
           time=None, **more) -> MemoryRecord:
    """A record with defaults, for samples and checks: `record(key="editor", value="vim")`."""
    return MemoryRecord(user, kind, key, value, text or f"The user's {key} is {value}.", session, message,
                        time or utc(2026, 1, 5), **more)


SAMPLE_SESSION = Session("u01-s1", "u01", utc(2026, 1, 5), (
    {"role": "user", "content": "I live in Lyon. I prefer vim for editing."},
    {"role": "assistant", "content": "Noted. What are you working on?"},
    {"role": "user", "content": "We decided to use SQLite for the database because the data fits on one machine."},
    {"role": "user", "content": "My API key is sk-test-4f9a8b7c6d5e4f3a2b1c, use it for the deploy."},
    {"role": "user", "content": "My colleague Anna has diabetes, so order lunch without sugar."},
    {"role": "user", "content": "我上个月去了东京。"},
))
__all__ = ["COALA", "CREDENTIAL_SHAPES", "CREDENTIAL_WORDS", "PRIVATE_WORDS", "REFUSAL_REASONS", "RELATIONS",
           "SECRET_WORDS", "ForgetPolicy", "IDK", "IDK_FORMS", "MEMORY_KINDS", "MemoryRecord", "QUESTION_KINDS",
           "RecallQuestion", "SAMPLE_SESSION", "STATUSES", "Session", "record", "utc"]
