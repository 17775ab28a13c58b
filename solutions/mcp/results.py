"""An MCP tool result as the tool message a model reads (chapter 01's pairing kept).

A `tools/call` result is {"content": [blocks], "isError": bool, "structuredContent": {...}}.
The message's content is the text blocks joined by newlines; a block that is not text is named,
not dropped ("[image/png image]", "[resource file:///x]"), so the model knows something was
there; with no text at all, the structured content as JSON. An error result starts "Error: " (added
unless its text already starts so), which is how chapter 01's loop and the teaching model recognise a failure to retry.
"""
from __future__ import annotations

import json


def _block_text(block) -> str:
    if not isinstance(block, dict):
        raise ValueError(f"a content block is a dict, not {type(block).__name__}")
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{block.get('mimeType', kind)} {kind}]"
    if kind == "resource":
        return f"[resource {block.get('resource', {}).get('uri', '?')}]"
    if kind == "resource_link":
        return f"[resource {block.get('uri', '?')}]"
    return f"[{kind} block]"


def result_text(result: dict) -> str:
    """The text a model reads for one `tools/call` result."""
    if not isinstance(result, dict) or not isinstance(result.get("content", []), list):
        raise ValueError(f"not a tools/call result (a dict with a content list): {str(result)[:80]}")
    text = "\n".join(_block_text(block) for block in result.get("content", []))
    if not text and result.get("structuredContent") is not None:
        text = json.dumps(result["structuredContent"], ensure_ascii=False)
    if result.get("isError") and not text.lower().startswith("error"):
        return "Error: " + (text or "the tool failed and said nothing")
    return text


def map_result(call_id: str, result: dict) -> dict:
    """The tool message answering call `call_id`: {"role": "tool", "tool_call_id", "content"}."""
    if not isinstance(call_id, str) or not call_id:
        raise ValueError(f"a tool message answers a call id (a non-empty string), not {call_id!r}")
    return {"role": "tool", "tool_call_id": call_id, "content": result_text(result)}
