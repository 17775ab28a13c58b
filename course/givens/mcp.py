"""Chapter 18's givens: what lab 18 hands the student, no answer in it (lab 18 asks for
`schema_tokens`, `build_catalogue`, `load_on_demand`, `check_pins` and `map_result`; they are in
`solutions.mcp`).

    names      SEPARATOR, namespaced(server, tool), split_name(name): "server__tool"
    tools      as_openai_tool(mcp_tool, server): an MCP definition as a Chat Completions tool
    pins       PINNED_FIELDS, definition_hash(tool), pin_definitions(listings): what a user
               approved, as {"server__tool": sha256 of the pinned fields}
    samples    LISTINGS: tools/list of three small servers written for the lab (two of them
               both serve `search`); RESULTS: tools/call results of every shape the mapper meets
"""
from __future__ import annotations

import hashlib
import json
import re

SEPARATOR = "__"
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")   # what OpenAI accepts as a function name
CATALOGUE_OPEN, CATALOGUE_CLOSE = "<available_tools>", "</available_tools>"
LINE_LIMIT = 120   # characters of a description a catalogue line shows
# What a model reads or a client acts on; `_meta` and other stamps a server may change on every
# listing are left out, so the same definition pins the same.
PINNED_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def namespaced(server: str, tool: str) -> str:
    """`server__tool`, refused when it would not be a valid function name."""
    name = f"{server}{SEPARATOR}{tool}"
    if SEPARATOR in server or not NAME.match(name):
        raise ValueError(f"{server!r} and {tool!r} do not make a tool name a provider accepts "
                         f"(letters, digits, _ and -, at most 64, no '{SEPARATOR}' in the server)")
    return name


def split_name(name: str) -> tuple[str, str]:
    """("server", "tool") of a namespaced name; ValueError for a name without a server."""
    server, sep, tool = name.partition(SEPARATOR)
    if not sep or not server or not tool:
        raise ValueError(f"{name!r} names no server (expected server{SEPARATOR}tool)")
    return server, tool


def as_openai_tool(tool: dict, server: str | None = None) -> dict:
    """An MCP tool definition as a Chat Completions tool, its name namespaced when `server` is
    given. A tool without an input schema takes no arguments (an empty object)."""
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
        raise ValueError(f"not an MCP tool definition (a dict with a name): {str(tool)[:80]}")
    name = namespaced(server, tool["name"]) if server else tool["name"]
    function = {"name": name, "description": tool.get("description") or "",
                "parameters": tool.get("inputSchema") or {"type": "object", "properties": {}}}
    return {"type": "function", "function": function}


def definition_hash(tool: dict) -> str:
    """sha256 (hex) of the tool's pinned fields as canonical JSON (sorted keys, no spaces)."""
    pinned = {key: tool[key] for key in PINNED_FIELDS if key in tool}
    text = json.dumps(pinned, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pin_definitions(listings: dict[str, list[dict]]) -> dict[str, str]:
    """{"server__tool": definition_hash} for every tool of every server: what was approved."""
    pins = {}
    for server, tools in listings.items():
        for tool in tools:
            name = namespaced(server, tool["name"])
            if name in pins:
                raise ValueError(f"server {server!r} lists two tools named {tool['name']!r}")
            pins[name] = definition_hash(tool)
    return pins


def _object(**properties) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties)}


LISTINGS = {
    "repos": [
        {"name": "get_issue", "description": "Get one issue with its comments. Use it when the "
                                             "user names an issue number.",
         "inputSchema": _object(repo={"type": "string", "description": "e.g. atlas"},
                                number={"type": "integer"})},
        {"name": "search", "description": "Search code and issues by words; results are ranked "
                                          "by relevance.",
         "inputSchema": _object(query={"type": "string"})},
    ],
    "wiki": [
        {"name": "search", "description": "Search the team's wiki pages. Returns titles and the "
                                          "first paragraph of each page.",
         "inputSchema": _object(query={"type": "string"})},
        {"name": "read_page", "description": "Read one wiki page in full (Markdown).",
         "inputSchema": _object(title={"type": "string"}),
         "annotations": {"readOnlyHint": True}},
    ],
    "clock": [
        {"name": "convert_time", "description": "Convert a time between two IANA time zones, "
                                                "e.g. 09:30 from Europe/Paris to Asia/Shanghai.",
         "inputSchema": _object(source_timezone={"type": "string"}, time={"type": "string"},
                                target_timezone={"type": "string"})},
    ],
}

RESULTS = {
    "text": {"content": [{"type": "text", "text": "Issue 17: Broken retry in session"}],
             "isError": False},
    "two texts": {"content": [{"type": "text", "text": "page 1 of 2"},
                              {"type": "text", "text": "Release notes: v2.4 ships Friday."}]},
    "error": {"content": [{"type": "text", "text": "no issue 999 in atlas"}], "isError": True},
    "image": {"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                          {"type": "text", "text": "a screenshot of the login page"}]},
    "structured only": {"content": [], "structuredContent": {"timezone": "Asia/Shanghai",
                                                             "datetime": "2026-12-06T16:30:00+08:00"}},
}
