"""The three layers of a skill, in tokens: its catalogue line, its body, and its files."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from course.tables import text_table

from lesson_support.skills.catalogue import SKILLS_DIR, course_skills, skill_files
from solutions.skills import catalog_line, read_skill_file
from solutions.tokens import count_tokens


@dataclass(frozen=True)
class LayerRow:
    skill: str
    catalogue: int       # layer 1: the skill's line in <available_skills>
    body: int            # layer 2: the SKILL.md body, loaded on demand
    files: int           # layer 3: sub-documents and scripts, read when a step needs them
    file_names: tuple[str, ...]


def layer_rows(folder: Path = SKILLS_DIR) -> list[LayerRow]:
    rows = []
    for skill in course_skills(folder):
        files = skill_files(skill.name, folder)
        rows.append(LayerRow(skill.name, count_tokens(catalog_line(skill)),
                             count_tokens(skill.body),
                             sum(count_tokens(read_skill_file(folder, skill.name, f)) for f in files),
                             tuple(files)))
    return rows


def format_layer_rows(rows: list[LayerRow]) -> str:
    body = [["", "line", "body", "files"]]  # the headers' second line
    body += [[r.skill, r.catalogue, r.body, r.files, ", ".join(r.file_names) or "-"] for r in rows]
    body.append(["total", sum(r.catalogue for r in rows), sum(r.body for r in rows), sum(r.files for r in rows)])
    return text_table(["skill", "layer 1", "layer 2", "layer 3", "files"], body, "<>>><",
                      widths=[18, 8, 8, 8, 0], sep=[" ", " ", " ", "  "])
