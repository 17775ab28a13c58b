"""Preload or load on demand: the skill and tool tokens each request of a session carries
under both designs."""
from __future__ import annotations

from pathlib import Path

from lesson_support.skills.catalogue import (CATALOG_BUDGET, SKILLS_DIR, course_skills, skill_files,
                                             tools_tokens)
from lesson_support.skills.harness import TOOL_SEARCH_TOOL, skill_result_text
from solutions.skills import add_tools, build_catalog, read_skill_file
from solutions.tokens import count_tokens


SESSION = (
    # (request, the skill it needs, the sub-documents its steps read)
    ("Why did the CI build fail on main? The failed job is job-4711.", "ci-triage", ()),
    ("What is the weather in Vancouver?", None, ()),
    ("Make a slide deck from the paper inbox/paper.pdf.", "slides-from-paper", ("html-to-slides.md",)),
    ("Write a short report of the sales export with totals per region and a chart.", "csv-report", ()),
    ("What time is it in Tokyo?", None, ()),
    ("Prepare the release notes for the next version from the commits since the last tag.",
     "release-notes", ()),
)


def preload_text(folder: Path = SKILLS_DIR) -> str:
    """Everything every skill holds, as one block: what preloading puts in each request."""
    parts = []
    for skill in course_skills(folder):
        parts.append(skill_result_text(skill))
        parts += [f"## {skill.name}/{f}\n{read_skill_file(folder, skill.name, f)}"
                  for f in skill_files(skill.name, folder)]
    return "\n".join(parts)


def preload_vs_progressive(uses, folder: Path = SKILLS_DIR) -> list[dict]:
    """Skill tokens each request carries, request by request, under both designs.

    `uses` is one (skill or None, sub-documents read) per request. Preloading carries every
    body and sub-document in every request. Progressive loading carries the catalogue, plus
    each body and sub-document from the request that loaded it on (a tool result stays in the
    history)."""
    skills = {s.name: s for s in course_skills(folder)}
    preload = count_tokens(preload_text(folder))
    carried = build_catalog(skills.values(), CATALOG_BUDGET).tokens
    seen, rows = set(), []
    for number, (name, files) in enumerate(uses, 1):
        if name and name not in seen:
            seen.add(name)
            carried += count_tokens(skill_result_text(skills[name]))
        for f in files:
            if (name, f) not in seen:
                seen.add((name, f))
                carried += count_tokens(read_skill_file(folder, name, f))
        rows.append({"request": number, "skill": name or "-", "preload": preload,
                     "progressive": carried})
    return rows


def tool_loading_rows(catalogue: list[dict], found_per_request, base: list[dict]) -> list[dict]:
    """Tool tokens each request carries: every schema preloaded, or `base` + tool_search and
    the tools found so far (appended once, kept)."""
    preload = tools_tokens(base + [t for t in catalogue if t not in base])
    tools, rows = base + [TOOL_SEARCH_TOOL], []
    for number, found in enumerate(found_per_request, 1):
        tools = add_tools(tools, found)
        rows.append({"request": number, "preload": preload, "deferred": tools_tokens(tools),
                     "tools": len(tools)})
    return rows
