"""Chapter 09's givens: what a parsed skill and a skills catalogue are, the error a bad
SKILL.md raises, the catalogue block's tags, and where the course's skills are on disk (the
ones a review accepts, and the hostile ones it refuses). The answers (`solutions.skills`) and
the lesson's support (`lesson_support.skills`) re-export them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from course.paths import DATA_DIR

SKILLS_DIR = DATA_DIR / "skills"
HOSTILE_DIR = DATA_DIR / "skills_hostile"

CATALOG_OPEN = "<available_skills>"
CATALOG_CLOSE = "</available_skills>"


class SkillError(ValueError):
    """A SKILL.md (or a skill name) that cannot be used, and why."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    metadata: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Catalog:
    text: str                       # the block to put in the context
    tokens: int                     # its size in o200k_base tokens (<= the budget)
    included: tuple[str, ...]       # names listed, in the block's order
    omitted: tuple[str, ...]        # names left out because they did not fit the budget
