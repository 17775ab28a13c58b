"""SKILL.md: YAML front matter between two `---` lines, then the body (the instructions).

    ---
    name: csv-report
    description: Use when ... Not for ...
    ---
    1. Call `describe_csv` ...

`parse_skill` reads the front matter with PyYAML's `safe_load` rules (no tags that build Python
objects), refuses duplicate keys (plain YAML keeps the last one silently, so a second `name`
could hide behind the first), keys that are not plain values, anchors and aliases (a few lines
of aliases can stand for billions of values), and checks every field the catalogue relies on.
Each defect has its own message, so whoever wrote the skill knows what to fix: a SKILL.md
comes from outside, so no text makes `parse_skill` raise anything but `SkillError`.
"""
from __future__ import annotations

import re

import yaml

from course.givens.skills import Skill, SkillError  # re-exported

NAME_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
ALLOWED_KEYS = frozenset({"name", "description", "license", "allowed-tools", "metadata", "version"})
FENCE = "---"


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping, and any alias."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise SkillError(f"front matter: line {mark.line + 2} uses a YAML alias ('*'); a "
                             f"skill's front matter is written out in full, without anchors")
        return super().compose_node(parent, index)


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, (str, int, float, bool, type(None))):
            raise SkillError(f"front matter: a key must be a plain word (line "
                             f"{key_node.start_mark.line + 2}), not a {type(key).__name__}")
        if key in seen:
            raise SkillError(f"front matter: the key {key!r} is given twice (line "
                             f"{key_node.start_mark.line + 2}); YAML would keep only the last one")
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


def _construct_int(loader, node):
    value = yaml.SafeLoader.construct_yaml_int(loader, node)
    if not -2**63 <= value < 2**63:  # larger ones cannot even be printed (Python's digit limit)
        raise SkillError(f"front matter: the number at line {node.start_mark.line + 2} does not "
                         f"fit in 64 bits; quote it to keep it as text")
    return value


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def check_skill_name(name) -> str:
    """`name` if it is a valid skill name (lowercase letters, digits, single hyphens; at most
    64 characters), else SkillError saying why. A valid name is never a path."""
    if not isinstance(name, str):
        raise SkillError(f"a skill name must be a string, not {type(name).__name__}")
    if not name:
        raise SkillError("a skill name cannot be empty")
    if len(name) > MAX_NAME_CHARS:
        raise SkillError(f"skill name is {len(name)} characters long; the limit is {MAX_NAME_CHARS}")
    if not NAME_PATTERN.fullmatch(name):
        raise SkillError(f"skill name {name!r} may hold only lowercase letters, digits and single "
                         f"hyphens (no slashes, dots, spaces or capitals), e.g. 'csv-report'")
    return name


def _split(text: str) -> tuple[str, str]:
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != FENCE:
        raise SkillError("no front matter: SKILL.md must start with a line '---', then "
                         "'name: ...' and 'description: ...', then another '---'")
    for i in range(1, len(lines)):
        if lines[i].rstrip() == FENCE:
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1:])
    raise SkillError("the front matter is never closed: add a line '---' after the description")


def _check_utf8(text: str, what: str) -> None:
    """A lone surrogate (from a `\\ud800` escape, or a str built by hand) cannot be sent to a
    model: JSON encoders and tokenizers refuse it later, far from its cause."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SkillError(f"{what} holds a character that is not valid Unicode text (position "
                         f"{exc.start}: a lone surrogate)") from None


def parse_skill(text: str) -> Skill:
    """Parse a SKILL.md text into a Skill, or raise SkillError naming the defect.

    Checks: text that is valid Unicode; front matter present and closed; valid YAML under
    safe_load (no Python tags, no aliases, not nested deeper than Python can read); a mapping
    with plain keys, no duplicate and no unknown ones, and values YAML can build; `name` a
    valid skill name; `description` a non-empty string of at most 1024 characters without
    angle brackets (they could close the catalogue's `<available_skills>` block); a non-empty
    body. The description's whitespace is collapsed to single spaces (one catalogue line per
    skill); the body is kept as written.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    _check_utf8(text, "SKILL.md")
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    head, body = _split(text)
    try:
        data = yaml.load(head, Loader=_UniqueKeyLoader)  # SafeLoader underneath: safe_load rules
    except SkillError:
        raise
    except RecursionError:
        raise SkillError("front matter is nested too deeply to read: a skill's front matter is a "
                         "few flat keys") from None
    except yaml.constructor.ConstructorError as exc:
        raise SkillError(f"front matter uses a YAML tag safe_load refuses ({exc.problem}): a "
                         f"skill's metadata is plain text, never an object to build") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 2}" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise SkillError(f"front matter is not valid YAML{line}: {problem}") from None
    except Exception as exc:  # noqa: BLE001
        # A value YAML recognises but cannot build (2001-13-45 as a date, `!!timestamp x`):
        # PyYAML's constructors then raise ValueError, OverflowError, AttributeError...
        raise SkillError(f"front matter has a value that cannot be read ({exc}): quote it to "
                         f"keep it as text") from None
    if data is None:
        raise SkillError("the front matter is empty: it needs 'name' and 'description'")
    if not isinstance(data, dict):
        raise SkillError(f"front matter must be keys and values (a YAML mapping), not a "
                         f"{type(data).__name__}")
    unknown = sorted(str(k) for k in data if k not in ALLOWED_KEYS)
    if unknown:
        raise SkillError(f"front matter has unknown keys {unknown}; allowed: {sorted(ALLOWED_KEYS)}")
    for key in ("name", "description"):
        if key not in data:
            raise SkillError(f"front matter has no '{key}'")
    name = check_skill_name(data["name"])
    description = data["description"]
    if not isinstance(description, str):
        raise SkillError(f"description must be text, not {type(description).__name__}")
    _check_utf8(description, "description")
    description = " ".join(description.split())
    if not description:
        raise SkillError("description is empty: it is all a model sees before loading the skill")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise SkillError(f"description is {len(description)} characters; the limit is "
                         f"{MAX_DESCRIPTION_CHARS}")
    if "<" in description or ">" in description:
        raise SkillError("description may not contain '<' or '>': they could close the "
                         "<available_skills> block and open another")
    body = body.strip("\n")
    if not body.strip():
        raise SkillError("the body is empty: a skill needs instructions after the front matter")
    metadata = {k: v for k, v in data.items() if k not in ("name", "description")}
    return Skill(name=name, description=description, body=body + "\n", metadata=metadata)
