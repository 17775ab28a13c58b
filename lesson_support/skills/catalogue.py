"""The course's skills and tools as they are on disk: the skill folders (and the hostile ones
the review refuses), the tool catalogue, and what a tool list costs in tokens."""
from __future__ import annotations

import json
import re
from pathlib import Path

from course.givens.skills import HOSTILE_DIR, SKILLS_DIR  # re-exported
from course.paths import DATA_DIR
from solutions.skills import Skill, load_skill
from solutions.tokens import count_request_tokens


TOOLS_FILE = DATA_DIR / "tools" / "catalogue.json"
CATALOG_BUDGET = 1_000


def skill_names(folder: Path = SKILLS_DIR) -> list[str]:
    return sorted(p.name for p in Path(folder).iterdir() if (p / "SKILL.md").is_file())


def course_skills(folder: Path = SKILLS_DIR) -> list[Skill]:
    """Every skill in the folder, loaded through the answer's `load_skill`."""
    return [load_skill(folder, name) for name in skill_names(folder)]


def tool_catalogue() -> list[dict]:
    return json.loads(TOOLS_FILE.read_text(encoding="utf-8"))


def tools_by_name(names, catalogue: list[dict] | None = None) -> list[dict]:
    index = {t["function"]["name"]: t for t in (catalogue or tool_catalogue())}
    return [index[name] for name in names]


def hostile_names() -> list[str]:
    return json.loads((HOSTILE_DIR / "names.json").read_text(encoding="utf-8"))


def skill_files(name: str, folder: Path = SKILLS_DIR) -> list[str]:
    root = Path(folder) / name
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and p.name != "SKILL.md")


def tools_tokens(tools: list[dict]) -> int:
    """What a `tools` list adds to every request (o200k_base, the teaching model's template)."""
    probe = [{"role": "user", "content": "x"}]
    return count_request_tokens(probe, tools) - count_request_tokens(probe) if tools else 0


def tool_stub(tool: dict) -> str:
    """A one-line stub: the name and the first sentence of the description."""
    fn = tool["function"]
    first = re.split(r"(?<=\.)\s", fn.get("description", ""), maxsplit=1)[0].rstrip(".")
    return f"- {fn['name']}: {first}"
