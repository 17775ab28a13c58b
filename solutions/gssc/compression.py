"""Compress: guarantee the token limit, leaving a note wherever entries were cut."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from course.givens.gssc.config import BudgetError
from course.givens.gssc.constants import SECTIONS
from course.givens.gssc.packets import Packet
from solutions.gssc.render import mandatory_tokens, structure
from solutions.tokens import count_tokens


@dataclass(frozen=True)
class Compressed:
    text: str
    tokens: int
    kept: list[Packet]
    dropped: list[Packet]
    cuts: dict[str, str]  # section -> the note left where entries were removed


def _cut_note(dropped: Sequence[Packet]) -> str:
    n, t = len(dropped), sum(p.tokens for p in dropped)
    return f"- [cut] {n} {'entry' if n == 1 else 'entries'} ({t} tokens) left out here to fit the token budget\n"


def cut_notes(dropped: Sequence[Packet]) -> dict[str, str]:
    by_section: dict[str, list[Packet]] = {}
    for p in dropped:
        by_section.setdefault(p.section, []).append(p)
    return {name: _cut_note(by_section[name]) for name in SECTIONS if name in by_section}


def compress(task: str, packets: Sequence[Packet], output: str, limit: int) -> Compressed:
    """Make the rendered context fit `limit` tokens, exactly counted.

    `packets` are in order of value, most valuable first (as `select` returns them). Entries
    are removed from the least valuable end until the context fits; then, like the fill, the
    removed ones are tried again from the most valuable down, and each that still fits goes
    back in (dropping one large entry can leave room for several small ones). The role &
    policies, the task and the output instructions are never touched. Each section that lost
    entries gets a `- [cut] ...` line saying how many and how many tokens. A limit that cannot
    hold the untouchable parts (plus the cut notes) raises BudgetError rather than returning
    something over the limit.
    """
    if not isinstance(limit, int) or limit < 0:
        raise ValueError(f"limit must be a whole number of tokens >= 0, got {limit!r}")
    pinned = [p for p in packets if p.pinned]
    optional = [p for p in packets if not p.pinned]
    floor = mandatory_tokens(task, pinned, output)
    if floor > limit:
        raise BudgetError(
            f"a limit of {limit} tokens cannot hold the role & policies, task and output "
            f"instructions, which need {floor} tokens; raise the budget or shorten them")
    text = structure(task, packets, output)
    total = count_tokens(text)
    if total <= limit:
        return Compressed(text, total, list(packets), [], {})

    def attempt(kept_flags: list[bool], kept_tokens: int) -> Compressed | None:
        """The context with these entries kept, if it fits (estimate first, then exactly)."""
        dropped = [p for p, keep in zip(optional, kept_flags) if not keep]
        cuts = cut_notes(dropped)
        if floor + kept_tokens + sum(count_tokens(c) for c in cuts.values()) > limit:
            return None
        kept = pinned + [p for p, keep in zip(optional, kept_flags) if keep]
        text = structure(task, kept, output, cuts)
        total = count_tokens(text)  # the exact check; the sum above is only a shortcut
        return Compressed(text, total, kept, dropped, cuts) if total <= limit else None

    flags = [True] * len(optional)
    kept_tokens = sum(p.tokens for p in optional)
    best = None
    for i in range(len(optional) - 1, -1, -1):  # drop from the least valuable end
        flags[i] = False
        kept_tokens -= optional[i].tokens
        best = attempt(flags, kept_tokens)
        if best:
            break
    if best is None:
        notes = sum(count_tokens(c) for c in cut_notes(optional).values())
        raise BudgetError(
            f"a limit of {limit} tokens holds the untouchable sections ({floor} tokens) but "
            f"not the notes saying what was cut ({notes} more); raise the budget")
    for i, packet in enumerate(optional):  # keep trying: put back whatever still fits
        if flags[i] or floor + kept_tokens + packet.tokens > limit:
            continue
        flags[i] = True
        trial = attempt(flags, kept_tokens + packet.tokens)
        if trial:
            best, kept_tokens = trial, kept_tokens + packet.tokens
        else:
            flags[i] = False
    return best
