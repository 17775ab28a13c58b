"""Routing in the harness: its own guess at the skill a request needs, and the hint it adds."""
from __future__ import annotations

from lesson_support.skills.tool_search import search_tools
from solutions.skills import Skill


def route_skills(request: str, skills: list[Skill], limit: int = 1) -> list[tuple[float, str]]:
    """The harness's own guess at the skills a request needs: BM25 over names and descriptions
    (the worked answers' remedy 2 for thinking question 7, with keywords instead of
    embeddings). Best first; empty when no word matches."""
    as_tools = [{"function": {"name": s.name, "description": s.description}} for s in skills]
    return [(score, tool["function"]["name"]) for score, tool in search_tools(request, as_tools, limit)]


def routing_hint(request: str, skills: list[Skill], limit: int = 1) -> str | None:
    """A note the harness appends to the user's message, naming the skills it routed to."""
    routed = route_skills(request, skills, limit)
    if not routed:
        return None
    by_name = {s.name: s for s in skills}
    lines = [f"- {name}: {by_name[name].description}" for _, name in routed]
    return "(The harness suggests a skill that may fit this request:\n" + "\n".join(lines) + ")"
