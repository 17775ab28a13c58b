"""Chapter 18's runtime: MCP servers and clients on the official Python SDK (`mcp`).

    server        ToolSpec, ResourceSpec, PromptSpec, ToolFailure; build_server(name, tools, ...)
                  -> the SDK's Server, serving exactly the definitions it is handed
    course_tools  the course's own tools (chapter 12's desk, chapter 06's notes, chapter 07's
                  terminal); course_server() serves them in-process
    client        connect(target) -> McpConnection: list_tools, call_tool, resources, prompts,
                  synchronous (a thread runs the SDK's async client)
    transports    serve_stdio, serve_http (127.0.0.1 only), start_http: a server in a subprocess

`python -m course.mcp --help` says which tools the course's server serves.
"""
from course.mcp.client import connect, course_server_command
from course.mcp.course_tools import course_server
from course.mcp.transports import start_http

__all__ = ["connect", "course_server", "course_server_command", "start_http"]
