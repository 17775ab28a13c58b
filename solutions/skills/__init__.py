"""Chapter 09: skills and tool search, loaded on demand and cache-safe (the answers).

    parse    SKILL.md: YAML front matter checked, a clear error per defect   parse_skill
    catalog  layer 1: every skill's name and description, in a budget        build_catalog
    load     layers 2 and 3: a body or a sub-document, only from inside      load_skill, read_skill_file
    tools    a tool list that only grows at its end (the cached prefix)      add_tools

What the lesson takes apart (the review of a skill's body, tool search over the catalogue, the
widget) is lesson support, in `lesson_support/skills/` and
`lesson_support/widgets/skills.py`.
"""
from solutions.skills.catalog import CATALOG_CLOSE, CATALOG_OPEN, build_catalog, catalog_line
from solutions.skills.load import load_skill, read_skill_file
from solutions.skills.parse import ALLOWED_KEYS, Skill, SkillError, check_skill_name, parse_skill
from solutions.skills.tools import add_tools
from solutions.skills.self_test import self_test

__all__ = [
    "ALLOWED_KEYS", "CATALOG_CLOSE", "CATALOG_OPEN", "Skill", "SkillError", "add_tools",
    "build_catalog", "catalog_line", "check_skill_name", "load_skill", "parse_skill",
    "read_skill_file", "self_test",
]
