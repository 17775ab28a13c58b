"""Structure: render packets into the six fixed sections, byte-stable whatever their order,
and work out the room the mandatory sections leave for candidates."""
from __future__ import annotations

from typing import Iterable, Mapping

from course.givens.gssc.config import BudgetError, ContextConfig
from course.givens.gssc.constants import DEFAULT_OUTPUT, SECTIONS
from course.givens.gssc.packets import Packet, not_a_header
from solutions.tokens import count_tokens


def _block(text: str, what: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{what} must be a non-empty string")
    return "\n".join(not_a_header(line.rstrip()) for line in text.strip().splitlines()) + "\n"


def _entry_order(p: Packet):
    return (p.epoch, p.source, p.content)


def _sections(task: str, packets: Iterable[Packet], output: str,
              cuts: Mapping[str, str] | None) -> dict[str, str]:
    """The text of each section, header included, in the fixed order."""
    by_section: dict[str, list[Packet]] = {name: [] for name in SECTIONS}
    for p in packets:
        if not isinstance(p, Packet):
            raise TypeError(f"expected Packet objects, got {type(p).__name__}")
        by_section[p.section].append(p)
    cuts = cuts or {}
    texts = {}
    for name in SECTIONS:
        if name == "Task":
            body = _block(task, "task")
        elif name == "Output":
            body = _block(output, "output instructions")
        else:
            body = "".join(p.entry for p in sorted(by_section[name], key=_entry_order))
        texts[name] = f"[{name}]\n{body}{cuts.get(name, '')}"
    return texts


def structure(task: str, packets: Iterable[Packet], output: str = DEFAULT_OUTPUT,
              cuts: Mapping[str, str] | None = None) -> str:
    """Render the context: the six sections in fixed order, each with its header even when empty.

    Inside a section, entries are in time order (then source, then text), so the same packets
    give the same bytes whatever order they arrive in: a stable prefix a provider can cache.
    `cuts` maps a section to a note that compress appends where it removed something.
    """
    return "".join(_sections(task, packets, output, cuts).values())


def section_tokens(task: str, packets: Iterable[Packet], output: str = DEFAULT_OUTPUT,
                   cuts: Mapping[str, str] | None = None) -> dict[str, int]:
    """Tokens each section takes in `structure(...)`'s text (headers included); they add up to
    the count of the whole text."""
    return {name: count_tokens(text)
            for name, text in _sections(task, packets, output, cuts).items()}


def mandatory_tokens(task: str, pinned: Iterable[Packet], output: str = DEFAULT_OUTPUT) -> int:
    """Tokens of the context with nothing optional in it: headers, policies, task, output."""
    return count_tokens(structure(task, [p for p in pinned if p.pinned], output))


def candidate_budget(task: str, pinned: Iterable[Packet], config: ContextConfig,
                     output: str = DEFAULT_OUTPUT) -> int:
    """Tokens left for candidates: budget - reserve - the mandatory sections (headers, pinned
    policies, task, output). A budget that cannot hold the mandatory sections is an error,
    never a silent overflow."""
    floor = mandatory_tokens(task, pinned, output)
    if floor > config.limit:
        raise BudgetError(
            f"budget {config.budget} minus reserve {config.reserve} leaves {config.limit} tokens, "
            f"but the role & policies, task and output instructions alone need {floor}; "
            f"raise the budget, lower the reserve or shorten them")
    return config.limit - floor
