"""Chapter 18: tools from MCP servers, and what they cost the context (the answers).

    schemas    what the tools cost a request                       schema_tokens
               (given: as_openai_tool, namespaced names, pin_definitions: course.givens.mcp)
    catalogue  a one-line catalogue and schemas loaded on demand   build_catalogue, load_on_demand
    pinning    definitions pinned by hash, changes found           pin_definitions, check_pins
    results    a tools/call result as the tool message             map_result, result_text
    agent      chapter 01's loop over MCP servers                  McpToolbox, run_mcp_agent

The MCP plumbing (servers, the client, transports) is the runtime's, `course/mcp/`; the lesson's
generated servers and measurements are lesson support, `lesson_support/mcp/`.
"""
from course.givens.mcp import as_openai_tool, pin_definitions
from solutions.mcp.agent import DefinitionsChanged, McpToolbox, run_mcp_agent
from solutions.mcp.catalogue import build_catalogue, load_on_demand
from solutions.mcp.pinning import check_pins
from solutions.mcp.results import map_result
from solutions.mcp.schemas import schema_tokens
from solutions.mcp.self_test import self_test

__all__ = ["DefinitionsChanged", "McpToolbox", "as_openai_tool", "build_catalogue", "check_pins",
           "load_on_demand", "map_result", "pin_definitions", "run_mcp_agent", "schema_tokens",
           "self_test"]
