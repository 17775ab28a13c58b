"""MCP's other primitives, and when a resource beats a tool.

A tool is chosen by the model, so its schema rides in every request whether it is used or not,
and reading through it costs a request and a reply. A resource is chosen by the application
(or the user): it costs nothing until the client attaches it, once, where the cache keeps it.
Reference material the agent needs for the whole session (the desk's rules) is a resource; an
action, or a lookup whose arguments only the conversation knows, is a tool.
"""
from __future__ import annotations

from course.mcp import connect, course_server
from course.tokenizer import count_tokens
from solutions.mcp import schema_tokens

RULES_URI = "course://desk/rules"
RULES_AS_TOOL = {"type": "function", "function": {
    "name": "course__read_rules", "description": "Read the service desk's procedures and business "
                                                 "rules before acting on a booking.",
    "parameters": {"type": "object", "properties": {}}}}


def primitives(notes_folder) -> dict:
    """What the course's server lists besides tools, and one of each read."""
    with connect(course_server(notes_folder)) as conn:
        resources = conn.list_resources()
        prompts = conn.list_prompts()
        rules = conn.read_resource(RULES_URI)["contents"][0]["text"]
        prompt = conn.get_prompt("move_trip", {"booking_ref": "TRVWXE", "pin": "1937",
                                               "new_day": "friday"})
    return {"resources": [(r["uri"], r["name"]) for r in resources],
            "prompts": [(p["name"], [a["name"] for a in p.get("arguments", [])]) for p in prompts],
            "rules": rules, "prompt_message": prompt["messages"][0]["content"]["text"]}


def resource_or_tool(rules: str, requests: int) -> dict:
    """Tokens over a session of `requests` requests: the rules attached once as a resource
    (in the cached prefix), or offered as a tool the model calls (its schema in every request,
    the rules in the history from the call on, one more request for the call)."""
    text = count_tokens(rules)
    schema = schema_tokens([RULES_AS_TOOL])["total"]
    return {"requests": requests, "rules_tokens": text,
            "as_resource": text * requests,
            "as_tool": schema * (requests + 1) + text * requests,
            "extra_requests_as_tool": 1}
