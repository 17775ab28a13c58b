"""Layer 1: the catalogue, every installed skill's name and description in one block.

It stays in the context for the whole session, so it must be small (a token budget) and
byte-stable: the same skills give the same bytes whatever order the folder listing returned
them in, or the prompt cache would miss on a reordered directory.
"""
from __future__ import annotations

from collections.abc import Iterable

from course.givens.skills import CATALOG_CLOSE, CATALOG_OPEN, Catalog, Skill  # re-exported
from solutions.tokens import count_tokens

def catalog_line(skill: Skill) -> str:
    """One skill's line in the block: `- name: description`."""
    return f"- {skill.name}: {skill.description}"


def _render(lines: list[str]) -> str:
    return "\n".join([CATALOG_OPEN, *lines, CATALOG_CLOSE])


def build_catalog(skills: Iterable[Skill], budget: int) -> Catalog:
    """The `<available_skills>` block listing `skills` in name order, within `budget` tokens.

    Skills are taken in name order; one whose line would push the block over the budget is
    left out (and named in `omitted`), and later, smaller ones may still fit. The same set of
    skills always gives the same bytes, whatever order they come in. Two skills with the same
    name are an error, and so is a budget too small for even the empty block.
    """
    skills = list(skills)
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise TypeError(f"budget must be an int, not {type(budget).__name__}")
    names = [s.name for s in skills]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"two skills share the name(s) {duplicates}: a name must pick one skill")
    empty = count_tokens(_render([]))
    if budget < empty:
        raise ValueError(f"budget {budget} is smaller than the empty catalogue ({empty} tokens)")
    lines, included, omitted = [], [], []
    for skill in sorted(skills, key=lambda s: s.name):
        candidate = lines + [catalog_line(skill)]
        if count_tokens(_render(candidate)) <= budget:
            lines, included = candidate, included + [skill.name]
        else:
            omitted.append(skill.name)
    text = _render(lines)
    return Catalog(text=text, tokens=count_tokens(text), included=tuple(included),
                   omitted=tuple(omitted))
