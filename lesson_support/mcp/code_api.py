"""What a program written for code execution over MCP may call: every tool of the generated
servers as `call(server, tool, **arguments)`.

The program runs in chapter 07's sandbox (lesson_support/mcp/code_execution.py); each server it
names is served there, in the program's own process, on first use (an MCP session over the SDK's
in-process transport: one Python start instead of two), so tool results stay inside the sandbox
and only what the program prints goes back to the model.
"""
from __future__ import annotations

import atexit

from course.mcp import connect
from lesson_support.mcp.generated import SHAPES, generated_server

_open: dict = {}


def call(server: str, tool: str, **arguments):
    """The tool's result: its structured content (a dict) when it has one, else its text.
    An error result raises RuntimeError with the server's message."""
    if server not in SHAPES:
        raise ValueError(f"no MCP server {server!r}; there are {', '.join(SHAPES)}")
    if server not in _open:
        _open[server] = connect(generated_server(server))
    result = _open[server].call_tool(tool, arguments)
    text = "\n".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")
    if result.get("isError"):
        raise RuntimeError(text)
    return result.get("structuredContent", text)


@atexit.register
def _close_all() -> None:
    for conn in _open.values():
        conn.close()
