"""An MCP server made from plain tool specifications, on the official SDK's low-level `Server`.

Why the low-level server and not the SDK's decorator server (`MCPServer`, FastMCP's successor in
mcp 2.x): `MCPServer` derives a tool's input schema from a Python signature, and this chapter
needs schemas given as data (the generated servers' nested schemas, a definition that changes
mid-session); the low-level server serves exactly the JSON it is handed. Both are the same SDK
and speak the same protocol; the interop tests talk to this one with the SDK's own client.

A `ToolSpec` is a name, a description, a JSON-schema for the arguments and a handler
`handler(arguments: dict) -> str | dict | list`: a str is one text block, anything else is sent
as JSON text and as `structuredContent` when it is a dict. A handler that raises gives an
`isError` result whose text names the exception, as the SDK's servers do; an unknown tool name
is the protocol error -32602 the specification asks for.

`tools`, `resources` and `prompts` are read on every request: a caller that changes the lists
changes what the next `tools/list` says (how a "rug pull" looks from outside).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError


class ToolFailure(Exception):
    """Raised by a handler for a failure the model should read as it is (an `isError` result
    whose text is the message alone)."""


@dataclass
class ToolSpec:
    name: str
    description: str
    input_schema: dict
    handler: Callable[[dict], Any]
    annotations: dict | None = None   # MCP tool annotations, e.g. {"readOnlyHint": True}

    def definition(self) -> types.Tool:
        extra = {"annotations": types.ToolAnnotations(**_snake(self.annotations))} if self.annotations else {}
        return types.Tool(name=self.name, description=self.description,
                          input_schema=self.input_schema, **extra)


@dataclass
class ResourceSpec:
    uri: str
    name: str
    description: str
    read: Callable[[], str]
    mime_type: str = "text/plain"


@dataclass
class PromptSpec:
    name: str
    description: str
    arguments: list[str]
    render: Callable[[dict], str]   # the arguments -> the text of one user message


@dataclass
class ServedLists:
    """What a server serves now; the handlers read it on every request."""
    tools: list[ToolSpec] = field(default_factory=list)
    resources: list[ResourceSpec] = field(default_factory=list)
    prompts: list[PromptSpec] = field(default_factory=list)


def _snake(annotations: dict) -> dict:
    names = {"readOnlyHint": "read_only_hint", "destructiveHint": "destructive_hint",
             "idempotentHint": "idempotent_hint", "openWorldHint": "open_world_hint"}
    return {names.get(k, k): v for k, v in annotations.items()}


def _result(value) -> types.CallToolResult:
    if isinstance(value, str):
        return types.CallToolResult(content=[types.TextContent(type="text", text=value)])
    text = json.dumps(value, ensure_ascii=False)
    structured = {"structured_content": value} if isinstance(value, dict) else {}
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], **structured)


def build_server(name: str, tools=(), *, resources=(), prompts=(), instructions: str | None = None,
                 version: str = "1.0") -> Server:
    """The SDK's `Server` serving these tools, resources and prompts. Its `served` attribute is
    the `ServedLists` the handlers read (change it to change what the server says)."""
    served = ServedLists(list(tools), list(resources), list(prompts))
    names = [t.name for t in served.tools]
    if len(set(names)) != len(names):
        raise ValueError(f"two tools of server {name!r} have the same name: {sorted(names)}")

    def tool(tool_name: str) -> ToolSpec:
        for spec in served.tools:
            if spec.name == tool_name:
                return spec
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {tool_name}")

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[t.definition() for t in served.tools])

    async def call_tool(ctx, params):
        spec = tool(params.name)
        try:
            return _result(spec.handler(dict(params.arguments or {})))
        except Exception as exc:  # the model reads the failure, as with any tool
            text = str(exc) if isinstance(exc, ToolFailure) else f"{type(exc).__name__}: {exc}"
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                        is_error=True)

    async def list_resources(ctx, params):
        return types.ListResourcesResult(resources=[types.Resource(
            uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
            for r in served.resources])

    async def read_resource(ctx, params):
        for r in served.resources:
            if r.uri == str(params.uri):
                return types.ReadResourceResult(contents=[types.TextResourceContents(
                    uri=r.uri, text=r.read(), mime_type=r.mime_type)])
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource: {params.uri}")

    async def list_prompts(ctx, params):
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=p.name, description=p.description,
            arguments=[types.PromptArgument(name=a, required=True) for a in p.arguments])
            for p in served.prompts])

    async def get_prompt(ctx, params):
        for p in served.prompts:
            if p.name == params.name:
                text = p.render(dict(params.arguments or {}))
                return types.GetPromptResult(description=p.description, messages=[
                    types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")

    def input_schema(tool_name: str):
        return next((t.input_schema for t in served.tools if t.name == tool_name), None)

    server = Server(name, version=version, instructions=instructions,
                    get_tool_input_schema=input_schema,
                    on_list_tools=list_tools, on_call_tool=call_tool,
                    on_list_resources=list_resources, on_read_resource=read_resource,
                    on_list_prompts=list_prompts, on_get_prompt=get_prompt)
    server.served = served
    return server
