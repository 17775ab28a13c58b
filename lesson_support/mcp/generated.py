"""Servers shaped like popular MCP servers, generated for the course (seeded, not copied).

Real servers that agents connect to list dozens of tools, each with a paragraph of description
and nested argument schemas (filters, sorting, pagination). Four shapes, written here from a
vocabulary and templates, the same bytes for the same seed:

    code_host   repositories, issues, pull requests, branches ...  (shaped like a code-hosting server)
    tracker     projects, tickets, sprints, boards ...             (shaped like an issue tracker's)
    chat        channels, messages, threads, users ...             (shaped like a team-chat server)
    browser     navigate, click, fill, snapshot ...                (shaped like a browser-automation server)

`generate_tools(shape)` gives the MCP definitions; `generated_server(shape)` serves them with the
SDK (through course.mcp) and answers every call from seeded records: a `get_*` tool returns one
record with nested detail, a `list_*`/`search_*` tool a page of 30 records, so a result is as
long as a real one (what code execution keeps out of the context). `record(shape, kind, key)`
is the same record, for tasks that need the right answer.
"""
from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass

from course.mcp.server import ToolFailure, ToolSpec, build_server

SEED = 18
PAGE = 30   # records in a list_* result


@dataclass(frozen=True)
class Shape:
    title: str
    resources: tuple[str, ...]           # nouns, singular
    verbs: tuple[str, ...]               # list, get, create, update, delete, search ...
    count: int                           # how many tools the server lists
    key: str                             # the parameter naming the container ("repo", "project")
    containers: tuple[str, ...]          # values of `key`
    fixed: tuple[str, ...] = ()          # tool names used as they are (a browser's verbs)


SHAPES: dict[str, Shape] = {
    "code_host": Shape("a code-hosting server", (
        "repository", "issue", "pull_request", "branch", "commit", "release", "workflow_run",
        "file", "label", "milestone", "review", "tag", "collaborator", "webhook", "secret"),
        ("list", "get", "create", "update", "delete", "search"), 42, "repo",
        ("atlas", "beacon", "cobalt", "delta-ui")),
    "tracker": Shape("an issue tracker's server", (
        "project", "ticket", "sprint", "board", "comment", "worklog", "version", "component",
        "filter", "dashboard", "attachment", "transition"),
        ("list", "get", "create", "update", "delete", "search"), 34, "project",
        ("OPS", "WEB", "DATA")),
    "chat": Shape("a team-chat server", (
        "channel", "message", "thread", "user", "reaction", "file", "reminder", "bookmark",
        "usergroup"), ("list", "get", "post", "update", "delete", "search"), 24, "channel",
        ("general", "releases", "incidents")),
    "browser": Shape("a browser-automation server", ("page",), (), 22, "tab", ("1", "2"), fixed=(
        "navigate", "navigate_back", "click", "hover", "drag", "type_text", "fill_form",
        "select_option", "press_key", "file_upload", "handle_dialog", "take_screenshot",
        "page_snapshot", "evaluate_script", "wait_for", "resize_window", "console_messages",
        "network_requests", "tabs_list", "tab_new", "tab_close", "save_pdf")),
}

WORDS = ("cache", "parser", "login", "export", "timeout", "upload", "search", "billing", "sync",
         "render", "webhook", "retry", "locale", "session", "index", "scheduler", "quota", "proxy")
ADJECTIVES = ("flaky", "slow", "broken", "missing", "duplicate", "stale", "wrong", "silent",
              "intermittent", "unbounded")
PEOPLE = ("amara", "lars", "mei", "diego", "fatima", "tomas", "priya", "kofi")
STATES = ("open", "closed", "merged", "draft")


def _human(name: str) -> str:
    return name.replace("_", " ")


def _plural(noun: str) -> str:
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + ("es" if noun.endswith(("s", "sh", "ch", "x")) else "s")


def _schema_for(shape: Shape, verb: str, resource: str, rng: random.Random) -> dict:
    """Nested arguments in the style of real servers: the container, an id, filters, paging."""
    props: dict = {shape.key: {"type": "string", "description": (
        f"The {_human(shape.key)} that holds the {_human(resource)}, e.g. "
        f"{shape.containers[0]}. Case-sensitive; use the exact name a list call returned.")}}
    required = [shape.key]
    if verb in ("get", "update", "delete"):
        props["number"] = {"type": "integer", "minimum": 1, "description": (
            f"The {_human(resource)}'s number within the {_human(shape.key)}, e.g. 17.")}
        required.append("number")
    if verb in ("list", "search"):
        props["filter"] = {"type": "object", "description": "Only records that match every field given.",
                           "properties": {
                               "state": {"type": "string", "enum": list(STATES),
                                         "description": "Lifecycle state; omit for all states."},
                               "labels": {"type": "array", "items": {"type": "string"},
                                          "description": "Every label listed must be present."},
                               "author": {"type": "string", "description": "Login of the author."},
                               "updated": {"type": "object", "description": "A time window.",
                                           "properties": {
                                               "after": {"type": "string", "format": "date-time"},
                                               "before": {"type": "string", "format": "date-time"}}}}}
        props["sort"] = {"type": "object", "properties": {
            "field": {"type": "string", "enum": ["created", "updated", "comments", "priority"]},
            "direction": {"type": "string", "enum": ["asc", "desc"], "default": "desc"}}}
        props["pagination"] = {"type": "object", "description": "Pages of results; start at 1.",
                               "properties": {"page": {"type": "integer", "minimum": 1, "default": 1},
                                              "per_page": {"type": "integer", "minimum": 1,
                                                           "maximum": 100, "default": PAGE}}}
    if verb == "search":
        props["query"] = {"type": "string", "description": "Words to search for; quotes for a phrase."}
        required.append("query")
    if verb in ("create", "update", "post"):
        props["fields"] = {"type": "object", "description": f"The {_human(resource)}'s fields to set.",
                           "properties": {
                               "title": {"type": "string"}, "body": {"type": "string",
                                                                     "description": "Markdown."},
                               "assignees": {"type": "array", "items": {"type": "string"}},
                               "labels": {"type": "array", "items": {"type": "string"}},
                               "metadata": {"type": "object", "additionalProperties": {"type": "string"}}}}
        required.append("fields")
        if rng.random() < 0.5:
            props["dry_run"] = {"type": "boolean", "default": False,
                                "description": "Validate and return the result without saving."}
    return {"type": "object", "properties": props, "required": required}


def _description(shape: Shape, verb: str, resource: str, rng: random.Random) -> str:
    noun = _human(resource)
    lead = {"list": f"List the {_plural(noun)} of a {_human(shape.key)}, newest first, one page at a time.",
            "get": f"Get one {noun} with all its details: fields, history, linked items and the "
                   f"latest comments.",
            "create": f"Create a new {noun} in a {_human(shape.key)}.",
            "post": f"Post a new {noun} to a {_human(shape.key)}.",
            "update": f"Change fields of an existing {noun}; fields not given keep their value.",
            "delete": f"Delete a {noun} permanently. This cannot be undone.",
            "search": f"Search {_plural(noun)} across a {_human(shape.key)} by words, with filters."}[verb]
    extras = [
        f"Use this when the user names a {noun} or asks about {_plural(noun)} in a specific {_human(shape.key)}.",
        "Results are paginated: when the response says has_more, call again with the next page.",
        f"Requires the token to have {rng.choice(['read', 'write', 'admin'])} scope on the "
        f"{_human(shape.key)}; a 403 means the scope is missing, not that the item is absent.",
        "Rate limited to 5,000 requests per hour per token; a 429 response carries Retry-After.",
        f"Do not use this to {rng.choice(['poll for changes', 'copy data between servers', 'export everything'])}: "
        f"use the webhook or export tools instead.",
        "Dates are ISO 8601 in UTC. Identifiers are stable; titles may change.",
    ]
    rng.shuffle(extras)
    return " ".join([lead] + extras[:rng.randint(3, 5)])


def _browser_tool(name: str, rng: random.Random) -> dict:
    element = {"type": "object", "description": "The element, as found in the latest page snapshot.",
               "properties": {"ref": {"type": "string", "description": "The exact ref from the snapshot, e.g. e42."},
                              "description": {"type": "string", "description":
                                              "Human-readable element description, used to ask permission."}},
               "required": ["ref"]}
    props = {"tab": {"type": "string", "description": "The tab to act in, e.g. 1; the current tab if omitted."}}
    if name in ("click", "hover", "type_text", "select_option", "file_upload", "drag"):
        props["element"] = element
    if name == "navigate":
        props["url"] = {"type": "string", "format": "uri", "description": "The URL to open."}
    if name in ("type_text", "press_key"):
        props["text"] = {"type": "string", "description": "Text or key name (e.g. ArrowLeft)."}
    if name == "fill_form":
        props["fields"] = {"type": "array", "items": {"type": "object", "properties": {
            "element": element, "value": {"type": "string"},
            "kind": {"type": "string", "enum": ["textbox", "checkbox", "radio", "combobox", "slider"]}},
            "required": ["element", "value", "kind"]}}
    if name == "wait_for":
        props["condition"] = {"type": "object", "properties": {
            "text": {"type": "string"}, "text_gone": {"type": "string"},
            "seconds": {"type": "number", "minimum": 0, "maximum": 60}}}
    description = (f"{_human(name).capitalize()} in the browser page. " + " ".join(rng.sample([
        "Take a page snapshot first: element refs come from the latest snapshot only.",
        "The action waits for the page to settle before it returns a new snapshot.",
        "Prefer this over screenshots: it is faster and the result is text the model can read.",
        "Fails with an error if the element is hidden, disabled or covered by another element.",
        "Navigation opened by this action is followed; pop-ups become new tabs.",
        "Use only on pages the user asked for; never enter credentials you were not given."], 3)))
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": props}}


def generate_tools(shape: str, seed: int = SEED) -> list[dict]:
    """The MCP tool definitions of a generated server, the same for the same seed."""
    spec = SHAPES[shape]
    rng = random.Random(f"{shape}:{seed}")
    if spec.fixed:
        return [_browser_tool(name, rng) for name in spec.fixed[:spec.count]]
    pairs = [(verb, res) for res in spec.resources for verb in spec.verbs]
    core = [p for p in pairs if p[1] == spec.resources[1] or p[0] in ("list", "get")]
    rest = [p for p in pairs if p not in core]
    chosen = (core + rng.sample(rest, len(rest)))[:spec.count]
    chosen.sort(key=lambda p: (spec.resources.index(p[1]), spec.verbs.index(p[0])))
    return [{"name": f"{verb}_{res}", "description": _description(spec, verb, res, rng),
             "inputSchema": _schema_for(spec, verb, res, rng)} for verb, res in chosen]


def _rng(*key) -> random.Random:
    return random.Random(hashlib.sha256(json.dumps(key).encode()).hexdigest())


def record(shape: str, kind: str, container: str, number: int) -> dict:
    """One seeded record, the same wherever it is asked for (a get_* result, a list_* row)."""
    rng = _rng(shape, kind, container, number)
    return {"number": number, "title": f"{rng.choice(ADJECTIVES).capitalize()} "
                                       f"{rng.choice(WORDS)} in {rng.choice(WORDS)}",
            "state": rng.choice(STATES), "author": rng.choice(PEOPLE),
            "labels": sorted(rng.sample(["bug", "ui", "backend", "docs", "p1", "p2", "security"], 2)),
            "comments": rng.randint(0, 40), "updated": f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}"}


def _detail(shape: str, kind: str, container: str, number: int) -> dict:
    rng = _rng(shape, kind, container, number, "detail")
    base = record(shape, kind, container, number)
    base["body"] = " ".join(rng.choice(WORDS) for _ in range(120))
    base["history"] = [{"at": f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}",
                        "by": rng.choice(PEOPLE), "event": rng.choice(["labeled", "assigned", "renamed",
                                                                       "referenced", "reopened"])}
                       for _ in range(12)]
    base["latest_comments"] = [{"by": rng.choice(PEOPLE), "text": " ".join(
        rng.choice(WORDS) for _ in range(30))} for _ in range(5)]
    return base


def _answer(shape: str, tool: str, arguments: dict):
    spec = SHAPES[shape]
    verb, _, kind = tool.partition("_")
    if spec.fixed:
        return {"tab": arguments.get("tab", "1"), "action": tool, "snapshot": [
            {"ref": f"e{i}", "role": role, "name": name} for i, (role, name) in enumerate(
                [("heading", "Dashboard"), ("link", "Settings"), ("button", "Sign out")] * 8)]}
    container = arguments.get(spec.key)
    if container not in spec.containers:
        raise ToolFailure(f"Error: no {_human(spec.key)} {container!r}; there are "
                          f"{', '.join(spec.containers)}")
    if verb in ("get", "update", "delete"):
        number = arguments.get("number")
        if not isinstance(number, int) or not 1 <= number <= 200:
            raise ToolFailure(f"Error: no {_human(kind)} number {number!r} in {container}")
        return _detail(shape, kind, container, number)
    if verb in ("list", "search"):
        page = int(((arguments.get("pagination") or {}).get("page")) or 1)
        numbers = range((page - 1) * PAGE + 1, page * PAGE + 1)
        return {"items": [record(shape, kind, container, n) for n in numbers], "page": page,
                "has_more": page < 4}
    return {"ok": True, "number": 201, "dry_run": bool(arguments.get("dry_run"))}


def tool_specs(shape: str, seed: int = SEED) -> list[ToolSpec]:
    return [ToolSpec(t["name"], t["description"], t["inputSchema"],
                     lambda arguments, name=t["name"]: _answer(shape, name, arguments))
            for t in generate_tools(shape, seed)]


def generated_server(shape: str, seed: int = SEED):
    """The SDK server of a generated shape (serve it in-process, or with course.mcp.transports)."""
    return build_server(shape, tool_specs(shape, seed),
                        instructions=f"Generated for the course: {SHAPES[shape].title}.")
