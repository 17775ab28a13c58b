"""On-demand definitions: `tools/list` once per server, a one-line catalogue in the context, and
a tool's full schema sent only once it is chosen (chapter 09's tool search, over MCP servers).

The catalogue lives in the system prompt, so it is paid every request too, but at a line per tool
instead of the whole schema. A chosen tool's schema is appended to the request's tools, never
inserted or reordered (chapter 09's `add_tools`: what was sent before stays a prefix, so the
cache still matches it).
"""
from __future__ import annotations

import re

from course.givens.mcp import (CATALOGUE_CLOSE, CATALOGUE_OPEN, LINE_LIMIT, as_openai_tool,
                               namespaced, split_name)
from solutions.skills import add_tools


# A sentence ends at . ? or ! followed by a space and a capital letter ("e.g. 09:30" goes on).
SENTENCE_END = re.compile(r"[.?!](?=\s+[A-Z])")


def first_sentence(text: str, limit: int = LINE_LIMIT) -> str:
    """The description's first sentence on one line; longer than `limit` characters, its
    first limit - 3 characters and '...'."""
    line = " ".join((text or "").split())
    end = SENTENCE_END.search(line)
    if end:
        line = line[:end.end()]
    return line if len(line) <= limit else line[:limit - 3] + "..."


def build_catalogue(listings: dict[str, list[dict]]) -> str:
    """One line per tool of every server, "- server__tool: first sentence", sorted by name,
    between <available_tools> and </available_tools>. The same listings give the same bytes
    (the catalogue sits in the cached prefix)."""
    lines = sorted(f"- {namespaced(server, tool['name'])}: {first_sentence(tool.get('description'))}"
                   for server, tools in listings.items() for tool in tools)
    return "\n".join([CATALOGUE_OPEN, *lines, CATALOGUE_CLOSE])


def load_on_demand(names, listings: dict[str, list[dict]], loaded: list[dict]) -> list[dict]:
    """`loaded` followed by the schemas of `names` (namespaced) not already in it, in the order
    named. Never reorders or drops a loaded tool; neither input is changed. A name no server
    lists is a ValueError naming it."""
    chosen = []
    for name in names:
        server, tool_name = split_name(name)
        found = [t for t in listings.get(server, ()) if t.get("name") == tool_name]
        if not found:
            raise ValueError(f"no server lists a tool {name!r}: choose one from the catalogue")
        chosen.append(as_openai_tool(found[0], server))
    return add_tools(loaded, chosen)
