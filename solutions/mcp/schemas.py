"""MCP tool definitions as a model's tools, and what they cost every request.

An MCP server lists each tool as {"name", "description", "inputSchema", ...}; a Chat Completions
request carries {"type": "function", "function": {"name", "description", "parameters"}}. Tools
of several servers share one list, so each name is namespaced by its server ("github__get_issue"):
two servers may both have a `search`, and a model must never call the wrong one.

The tools sit at the very start of the prompt (the teaching model's template, chapter 02: one
block "tools" + one JSON line per tool, before the first message), so every request of a session
pays for all of them, and a change to any of them changes the prefix the cache matched.
"""
from __future__ import annotations

import json

from course.tokenizer import count_tokens

def schema_tokens(tools: list[dict]) -> dict:
    """What a list of Chat Completions tools costs a request, in o200k_base tokens.

    Under the teaching model's template the tools are one block
    `<|im_start|>tools\\n{tool 1 as JSON}\\n{tool 2 as JSON}...<|im_end|>\\n` (json.dumps with
    ensure_ascii=False; the two markers are one token each). Returns
        {"per_tool": {name: tokens of that tool's JSON line}, "total": tokens of the whole block}
    `total` is exactly what the tools add to a request's prompt_tokens ({} and 0 without tools).
    """
    if not isinstance(tools, list):
        raise TypeError(f"tools must be a list of tool definitions, not {type(tools).__name__}")
    if not tools:
        return {"per_tool": {}, "total": 0}
    lines = [json.dumps(tool, ensure_ascii=False) for tool in tools]
    per_tool = {tool["function"]["name"]: count_tokens(line) for tool, line in zip(tools, lines)}
    block = "tools\n" + "\n".join(lines)
    return {"per_tool": per_tool, "total": count_tokens(block) + 2 + count_tokens("\n")}
