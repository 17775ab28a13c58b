"""What a request's context is made of, and where it first differs from the previous request:
pure functions of the request (its messages and tools), no OpenTelemetry here.

Every message belongs to one *part* (system prompt, history, tool results, notes, a summary …).
The part is said by the code that put the message there (`tag`), never guessed from the text;
an untagged message falls back to its role's part (a structural fact, not a guess). The tools
block is always "tool definitions". Code that writes a part into another message (retrieved
memory into the system prompt, a note into the user's request) tags that text inside it
(`tag(part, message, text)`): its tokens move from the message's part to its own.

Tokens are counted with the teaching model's template (course/llm/template.py): exact for the
teaching model, an estimate for a real provider (whose `usage` stays the ground truth).
"""
from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from dataclasses import dataclass

from course.i18n import N_

TOOLS_PART = N_("tool definitions")
ROLE_PARTS = {"system": N_("system prompt"), "developer": N_("system prompt"),
              "user": N_("history"), "assistant": N_("history"), "tool": N_("tool results")}
OTHER_PART = N_("history")
# Parts course code tags (any other name is allowed too: these are the common ones).
PARTS = (N_("system prompt"), TOOLS_PART, N_("history"), N_("tool results"), N_("notes"),
         N_("status bar"), N_("skills"), N_("retrieved memory"), N_("summary"))

_TAGS: OrderedDict[str, str] = OrderedDict()   # message hash -> part, most recent last
_SEGMENTS: OrderedDict[str, tuple] = OrderedDict()  # message hash -> ((part, text inside it), ...)
_TAGS_LIMIT = 100_000                          # a bound, so a long session cannot grow them forever
_tags_lock = threading.Lock()


def as_plain(message) -> dict:
    """A message as a plain dict (the SDK's message objects are accepted by `create` too)."""
    if isinstance(message, dict):
        return message
    dump = getattr(message, "model_dump", None)
    return dump(exclude_none=True) if dump else {"content": str(message)}


def frozen(value):
    """A hashable copy of a message's value: equal values, equal copies."""
    if isinstance(value, dict):
        return tuple(sorted((key, frozen(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(frozen(item) for item in value)
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


def message_hash(message) -> str:
    """A short digest of one message, equal for equal messages, within this process. Python's own
    hash: a string's hash is computed once and kept on it, so a history sent again and again
    (the same strings each time) costs next to nothing to digest; a copy of a message digests
    alike, and a changed message is a new string. Never written to the trace file."""
    return digest_of(frozen(as_plain(message)))


def digest_of(value) -> str:
    """A hashable value's digest, as text (within this process; never written to the trace)."""
    return format(hash(value) & 0xFFFF_FFFF_FFFF_FFFF, "016x")


def _remember(table: OrderedDict, key: str, value) -> None:
    table[key] = value
    table.move_to_end(key)
    while len(table) > _TAGS_LIMIT:
        table.popitem(last=False)


def tag(part: str, message, text: str | None = None):
    """Say which part of the context `message` is ("notes", "summary", …); returns the message,
    so it can be written inline: `messages.append(tag("notes", {"role": "user", ...}))`.
    With `text`: only that text, written inside the message, is `part` (a memory block in the
    system prompt); the rest keeps the message's own part. Raises ValueError if the message's
    text does not contain it. The tag belongs to the message's content: an equal message sent
    later has the same part."""
    key = message_hash(message)
    if text is not None:
        from course.llm.template import content_text

        if not isinstance(text, str) or not text or text not in content_text(as_plain(message).get("content")):
            raise ValueError(f"tag({part!r}, message, text): the text must be a non-empty string the "
                             f"message's content contains, got {str(text)[:60]!r}")
    with _tags_lock:
        if text is None:
            _remember(_TAGS, key, part)
        else:
            segments = _SEGMENTS.get(key, ())
            if (part, text) not in segments:
                segments += ((part, text),)
            _remember(_SEGMENTS, key, segments)
    return message


def part_of(message, digest: str) -> str:
    """The part `message` was tagged with, else its role's part."""
    tagged = _TAGS.get(digest)
    if tagged is not None:
        return tagged
    return ROLE_PARTS.get(as_plain(message).get("role"), OTHER_PART)


@dataclass(frozen=True)
class Composition:
    """One request's context: per unit (the tools block, then each message) its digest, part
    and tokens; `fixed` is the tokens outside any message (the reply primer); `splits`: tagged
    text inside a unit, as (unit, part, tokens, the text's digest), the tokens taken from that
    unit's own part."""

    hashes: tuple[str, ...]
    parts: tuple[str, ...]
    tokens: tuple[int, ...]
    fixed: int
    splits: tuple[tuple[int, str, int, str], ...] = ()

    @property
    def total(self) -> int:
        return sum(self.tokens) + self.fixed

    def by_part(self) -> dict[str, int]:
        """Tokens per part, in the order the parts first appear (a unit's own part before the
        parts tagged inside it)."""
        out: dict[str, int] = {}
        inside: dict[int, list] = {}
        for unit, part, count, _digest in self.splits:
            inside.setdefault(unit, []).append((part, count))
        for unit, (part, count) in enumerate(zip(self.parts, self.tokens)):
            moved = inside.get(unit, ())
            own = count - sum(n for _part, n in moved)
            if own > 0 or not moved:
                out[part] = out.get(part, 0) + own
            for inner, n in moved:
                out[inner] = out.get(inner, 0) + n
        return out


_COUNTS: OrderedDict[str, int] = OrderedDict()  # unit digest -> tokens (history repeats itself)
_COUNTS_LIMIT = 50_000


def _counted(key: str, count) -> int:
    """The tokens of the unit `key`, computed by `count()` only the first time it is seen: a
    request repeats the tools and the history of the one before, and counting them is most of
    what composing costs."""
    tokens = _COUNTS.get(key)
    if tokens is None:
        tokens = _COUNTS[key] = count()
        if len(_COUNTS) > _COUNTS_LIMIT:
            _COUNTS.popitem(last=False)
    return tokens


@functools.cache
def _primer_tokens() -> int:
    from course.llm.template import fixed_token_count

    return fixed_token_count(None)


def compose(messages, tools=None) -> Composition:
    """The composition of a request (its `messages` and `tools`, as sent)."""
    from course.llm.template import fixed_token_count, message_token_count, piece_ids

    hashes, parts, tokens, splits = [], [], [], []
    fixed = _primer_tokens()
    if tools:
        tools = list(tools)
        digest = message_hash({"tools": tools})
        hashes.append(digest)
        parts.append(TOOLS_PART)
        tokens.append(_counted("tools " + digest, lambda: fixed_token_count(tools) - fixed))
    for message in messages or ():
        plain = as_plain(message)
        digest = message_hash(plain)
        hashes.append(digest)
        parts.append(part_of(plain, digest))
        tokens.append(_counted(digest, lambda: message_token_count(plain)))
        left = tokens[-1]
        for part, text in _SEGMENTS.get(digest, ()):
            # the text's own token count (at most what is left of the message: segments that
            # overlap cannot take more than the message has)
            text_digest = digest_of(text)
            count = min(left, _counted("text " + text_digest, lambda: len(piece_ids(text))))
            splits.append((len(hashes) - 1, part, count, text_digest))
            left -= count
    return Composition(tuple(hashes), tuple(parts), tuple(tokens), fixed, tuple(splits))


@dataclass(frozen=True)
class Divergence:
    """Where a request first differs from the previous one with the same cache key: the unit
    (0 is the tools block when there is one), the token position (everything before it is a
    shared prefix) and the part that differs (a text tagged inside the unit, when that is what
    changed: `changed_part`); `unit` None: the requests are equal up to the shorter one's end."""

    unit: int | None
    token: int
    part: str | None


def changed_part(before: Composition, now: Composition, unit: int) -> str:
    """The part of `now`'s `unit` that changed: a text tagged inside it that `before`'s unit at
    the same place does not hold (the memory block of a system prompt whose rules stayed the
    same), else the unit's own part."""
    held = {(part, digest) for u, part, _count, digest in before.splits if u == unit}
    for u, part, _count, digest in now.splits:
        if u == unit and (part, digest) not in held:
            return part
    return now.parts[unit]


def divergence(before: Composition, now: Composition) -> Divergence:
    """The first position where `now` differs from `before` (unit-wise: a changed message
    breaks the prefix at its start)."""
    shared = 0
    for i, (a, b) in enumerate(zip(before.hashes, now.hashes)):
        if a != b:
            return Divergence(i, shared, changed_part(before, now, i))
        shared += now.tokens[i]
    if len(now.hashes) > len(before.hashes):  # the new units come after the whole old prompt
        # the old prompt's generation primer is not part of the new one: the new unit starts here
        i = len(before.hashes)
        return Divergence(i, shared, now.parts[i])
    return Divergence(None, shared, None)
