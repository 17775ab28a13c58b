"""Layers 2 and 3: a skill's body, and its sub-documents, read only from inside the folder.

A skill name reaches `load_skill` from a model's tool call, so it is untrusted input. The name
must be a plain skill name (no separators, no dots), and the file it leads to must resolve
(symlinks followed) to a path inside the skills folder: a skill folder that is a symlink to
somewhere else is refused, not followed.
"""
from __future__ import annotations

from pathlib import Path, PurePosixPath

from solutions.skills.parse import Skill, SkillError, check_skill_name, parse_skill

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256 * 1024


def _inside(folder: Path, target: Path, what: str) -> Path:
    root = folder.resolve(strict=True)
    try:
        real = target.resolve(strict=True)
    except FileNotFoundError:
        raise SkillError(f"{what} does not exist") from None
    except (OSError, RuntimeError) as exc:  # a symlink loop, a name the OS refuses
        raise SkillError(f"{what} cannot be opened: {exc}") from None
    if not real.is_relative_to(root):
        raise SkillError(f"{what} resolves outside the skills folder (a symlink out?): refused")
    if not real.is_file():
        raise SkillError(f"{what} is not a file")
    if real.stat().st_size > MAX_SKILL_BYTES:
        raise SkillError(f"{what} is larger than {MAX_SKILL_BYTES} bytes")
    return real


def load_skill(folder, name) -> Skill:
    """The skill `name` from `folder/name/SKILL.md`, parsed and checked, or SkillError.

    `name` must be a valid skill name (so never a path), the file must resolve inside
    `folder`, and the front matter's name must equal the folder's name (a skill cannot pose as
    another one).
    """
    folder = Path(folder)
    check_skill_name(name)
    if not folder.is_dir():
        raise SkillError(f"skills folder {folder} does not exist")
    path = _inside(folder, folder / name / SKILL_FILE, f"skill {name!r}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SkillError(f"skill {name!r}: SKILL.md is not UTF-8 text") from None
    try:
        skill = parse_skill(text)
    except SkillError as exc:
        raise SkillError(f"skill {name!r}: {exc}") from None
    if skill.name != name:
        raise SkillError(f"skill {name!r}: its front matter says name {skill.name!r}; the folder "
                         f"and the name must agree")
    return skill


def read_skill_file(folder, name, relative) -> str:
    """Layer 3: the text of a file inside skill `name`'s folder (a sub-document or script).

    `relative` must be a relative path with no `..` part; the result must resolve inside the
    skill's own folder.
    """
    check_skill_name(name)
    if not isinstance(relative, str) or not relative or "\x00" in relative or "\\" in relative:
        raise SkillError(f"file {relative!r}: give a relative path such as 'reference.md'")
    parts = PurePosixPath(relative)
    if parts.is_absolute() or ".." in parts.parts:
        raise SkillError(f"file {relative!r}: absolute paths and '..' are refused")
    skill_dir = Path(folder) / name
    if not skill_dir.is_dir():
        raise SkillError(f"skill {name!r} does not exist")
    path = _inside(skill_dir, skill_dir / parts, f"file {relative!r} of skill {name!r}")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SkillError(f"file {relative!r} of skill {name!r} is not UTF-8 text") from None
