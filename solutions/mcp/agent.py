"""Chapter 01's agent loop as an MCP client: the tools of every connected server, namespaced,
each call sent to its own server, each result mapped to the tool message that answers it.

`McpToolbox(connections)` lists every server's tools once (`tools/list`) and pins them: what it
lists when made is what the user approved. `run_mcp_agent` lists them again before it starts and
refuses to run when a definition changed, appeared or vanished since (a server that changed its
tools after approval); `toolbox.approve()` accepts the new definitions, as a user would after
reading them.
"""
from __future__ import annotations

from course.givens.mcp import as_openai_tool, pin_definitions, split_name
from solutions.agent_loop import run_agent
from solutions.mcp.pinning import check_pins
from solutions.mcp.results import result_text


class DefinitionsChanged(RuntimeError):
    """A server's tools differ from the approved pins; `changes` says how."""

    def __init__(self, changes: dict):
        self.changes = changes
        parts = [f"{kind}: {', '.join(names)}" for kind, names in changes.items() if names]
        super().__init__("the servers' tools differ from what was approved (" + "; ".join(parts)
                         + "): read the new definitions and approve() them, or disconnect")


class McpToolbox:
    """The tools of several MCP connections ({server name: connection}) as one tool list."""

    def __init__(self, connections: dict):
        self.connections = dict(connections)
        self.listings = self._list()
        self.pins = pin_definitions(self.listings)

    def _list(self) -> dict[str, list[dict]]:
        return {server: conn.list_tools() for server, conn in self.connections.items()}

    def changes(self) -> dict[str, list[str]]:
        """`tools/list` again, compared with the pins (check_pins' three lists)."""
        return check_pins(self.pins, self._list())

    def approve(self) -> None:
        """Accept what the servers list now (after a person has read it)."""
        self.listings = self._list()
        self.pins = pin_definitions(self.listings)

    def tools(self) -> list[dict]:
        """The approved tools as Chat Completions tools, server by server, in listing order."""
        return [as_openai_tool(tool, server) for server, tools in self.listings.items()
                for tool in tools]

    def execute(self, name: str, arguments: dict) -> str:
        """Run `server__tool` on its server; the text a model reads (errors start "Error: ")."""
        server, tool = split_name(name)
        if server not in self.connections:
            return f"Error: no MCP server named {server!r} is connected"
        return result_text(self.connections[server].call_tool(tool, arguments))


def run_mcp_agent(client, messages: list, toolbox: McpToolbox, max_iterations: int = 10,
                  model: str | None = None) -> dict:
    """Chapter 01's `run_agent` with the toolbox's tools; DefinitionsChanged before any request
    when a server's tools are no longer the approved ones."""
    changes = toolbox.changes()
    if any(changes.values()):
        raise DefinitionsChanged(changes)
    return run_agent(client, messages, toolbox.tools(), toolbox.execute, max_iterations, model)
